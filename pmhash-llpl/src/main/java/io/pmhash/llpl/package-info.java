/**
 * The llpl pool backend: a pmhash pool hosted in a PMDK (libpmemobj) pool file through Intel's
 * llpl, selected with {@code PoolOptions.withBackend("llpl")} and found by {@link
 * java.util.ServiceLoader} ({@code META-INF/services}). Optional: the FFM default never loads it.
 * See {@code docs/llpl.md}.
 *
 * <p>This module has no {@code module-info}: llpl 1.2.0 is not modular (its jar has no module
 * name, so a named module could only {@code requires} its file-based name, which Maven warns must
 * never be published, and which Surefire leaves on the class path, where a named module cannot
 * read it). {@code pmhash-llpl} is therefore the automatic module {@code io.pmhash.llpl}
 * (manifest {@code Automatic-Module-Name}), which reads llpl wherever llpl is.
 */
package io.pmhash.llpl;
