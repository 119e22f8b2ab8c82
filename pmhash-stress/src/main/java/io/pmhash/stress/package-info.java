/**
 * jcstress tests, each named after the property it checks, with a deliberately broken
 * variant beside the real test as a negative control: the broken variant must show its
 * race (an {@code ACCEPTABLE_INTERESTING} outcome) on a machine and JVM where the real
 * test's forbidden outcomes would be caught. The Dash bucket races are in {@code
 * io.pmhash.schemes.dash.DashOptimisticRead}: this module is not a JPMS module (jcstress runs
 * on the class path), so a class of the dash package here shares the package-private bucket
 * code of pmhash-schemes without any API added for it.
 *
 * <p>Run (from the repository root, after {@code ./pmhash mvn -pl pmhash-stress -am package}):
 *
 * <pre>
 *   java -jar pmhash-stress/target/jcstress.jar -m quick -sc false \
 *       -jvmArgs --enable-native-access=ALL-UNNAMED -t io.pmhash          # quick, CI
 *   java -jar pmhash-stress/target/jcstress.jar -jvmArgsPrepend --enable-native-access=ALL-UNNAMED
 *                                                                         # full: every JVM mode
 *   java -jar pmhash-stress/target/jcstress.jar -t SlotReuse -m quick ... # one test
 * </pre>
 *
 * <p>jcstress writes {@code results/} and a {@code jcstress-results-*.bin.gz} into the
 * working directory. {@code --enable-native-access=ALL-UNNAMED} lets the forks load the
 * native flush shim and JNA (thread affinity) without a warning.
 */
package io.pmhash.stress;
