/**
 * The service-provider interface through which schemes plug into {@link io.pmhash.map.PmHash}.
 */
package io.pmhash.map.spi;
