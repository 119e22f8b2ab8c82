/**
 * JMH benchmarks. Each class states its run command; all fork with
 * {@code --enable-native-access=ALL-UNNAMED} (the shaded jar runs on the class path, where
 * pmhash-core is unnamed) and keep their inputs precomputed
 * outside the measured region. Numbers measured on DRAM or tmpfs are not
 * persistent-memory numbers.
 */
package io.pmhash.jmh;
