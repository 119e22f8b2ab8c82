/**
 * The hashing schemes of pmhash. Each scheme lives in a package named after its paper ({@code
 * dash}, {@code cceh}, {@code level}, {@code group}, {@code esh}, {@code nvlh}), registers a
 * {@link io.pmhash.map.spi.SchemeProvider}, and documents its layout in {@code
 * docs/format/<scheme>.md}. {@link io.pmhash.map.PmHash#schemes()} lists the schemes a build
 * provides.
 */
package io.pmhash.schemes;
