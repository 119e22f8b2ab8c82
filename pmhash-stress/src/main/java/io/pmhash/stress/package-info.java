/**
 * jcstress tests, each named after the property it checks, with a deliberately broken
 * variant beside the real test as a negative control: the broken variant must show its
 * race (an {@code ACCEPTABLE_INTERESTING} outcome) on a machine and JVM where the real
 * test's forbidden outcomes would be caught.
 *
 * <p>Run (from the repository root, after {@code ./pmhash test}):
 *
 * <pre>
 *   java -jar pmhash-stress/target/jcstress.jar                          # all, default mode
 *   java -jar pmhash-stress/target/jcstress.jar -t VersionLock -m quick  # about a minute
 * </pre>
 *
 * <p>jcstress writes {@code results/} and a {@code jcstress-results-*.bin.gz} into the
 * working directory. On JDK 24+ its forks warn that JNA (thread affinity) loads a
 * native library from the class path; add
 * {@code -jvmArgsPrepend --enable-native-access=ALL-UNNAMED} to silence that.
 */
package io.pmhash.stress;
