/**
 * The hashing schemes of pmhash. Each scheme lives in a package named after its
 * paper ({@code dash}, {@code cceh}, {@code level}, {@code group}, {@code esh},
 * {@code nvlh}) and documents its layout in {@code docs/format/<scheme>.md}.
 */
package io.pmhash.schemes;
