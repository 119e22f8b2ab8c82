/**
 * The service interface of pool backends other than the built-in FFM file ({@link
 * io.pmhash.core.spi.PoolBackend}); {@code pmhash-llpl} implements it over PMDK's libpmemobj.
 */
package io.pmhash.core.spi;
