package io.pmhash.schemes.mutation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.crash.MutationCheck;
import io.pmhash.testkit.JUnitSuite;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The mutation check of issue 9 over the schemes' crash tests: every flush and every drain call
 * site, skipped alone, must make some crash test fail ({@link MutationCheck}).
 *
 * <p>By default (CI) this runs the site inventory of the level hashing crash tests only and checks
 * it is sound. The full check runs each scheme's crash test class once per site (minutes):
 *
 * <pre>
 * ./pmhash mvn -pl pmhash-schemes -am verify -Dpmhash.mutation=true \
 *     -Dtest='*MutationCheckTest' -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * {@code -Dpmhash.mutation=dash,cceh} picks suites ({@code dash}, {@code dash-pointer}, {@code
 * dashlh}, {@code cceh}, {@code level}, {@code group}, {@code esh}, {@code nvlh});
 * {@code -Dpmhash.mutation.site=CcehSplit.finish} mutates only the sites whose id this regular
 * expression is found in; {@code -Dpmhash.mutation.debug=true} prints each JUnit run's summary and failures.
 * Each table is written to {@code target/mutation/<suite>.txt} as the check goes (a site's line as
 * soon as the site is done, the total at the end, so a run cut short keeps every finished site)
 * and printed at the end; the test fails if a site survives that {@link #EXPLAINED} does not list.
 */
class SchemeMutationCheckTest {
  /** The suites: a name and the crash test classes it runs (package-private: named). */
  static final Map<String, List<String>> SUITES = new LinkedHashMap<>();

  static {
    SUITES.put("dash", List.of("io.pmhash.schemes.dash.DashCrashTest"));
    SUITES.put("dash-pointer", List.of("io.pmhash.schemes.dash.DashPointerCrashTest"));
    SUITES.put("cceh", List.of("io.pmhash.schemes.cceh.CcehCrashTest"));
    SUITES.put("level", List.of("io.pmhash.schemes.level.LevelCrashTest"));
    SUITES.put("group", List.of("io.pmhash.schemes.group.GroupCrashTest"));
    SUITES.put("dashlh", List.of("io.pmhash.schemes.dash.DashLhCrashTest"));
    SUITES.put("esh", List.of("io.pmhash.schemes.esh.EshCrashTest"));
    SUITES.put("nvlh", List.of("io.pmhash.schemes.nvlh.NvlhCrashTest", "io.pmhash.schemes.nvlh.NvdhCrashTest"));
  }

  /**
   * Sites that survive for a stated reason, without their line numbers (so that edits elsewhere in
   * a file keep them matched). See docs/reliability.md, "Mutation check".
   */
  static final Set<String> EXPLAINED = Set.of(
      // (a) Pool header lifecycle. A scheme crash test never crashes a reopened pool, and its
      // clean close comes after every operation; core's PoolHeaderCrashTest catches both.
      "flush Pool.close", "drain Pool.close", "flush Pool.markOpen", "drain Pool.markOpen",
      // (b) A drain subsumed by the same thread's next drain, which comes before anything durable
      // can depend on it: the publication's redo entries drain (Redo.commitActions "redo 1").
      "drain Allocator.raiseHighWater", "drain LevelResize.expand", "drain LevelTable.create",
      "drain Allocator.formatRun", "drain GroupResize.resize", "drain GroupTable.create",
      "drain NvlhTable.create", "drain NvdhTable.create", "drain NvdhResize.rehash",
      // (c) Redo 1 itself: the commit word carries a checksum of the entries, so a commit word
      // durable without its entries is discarded like an uncommitted record.
      "drain Redo.commitActions",
      // (d) Retiring a record, a log or a split, or retracting a moved original: redone
      // idempotently by recovery, and before any later operation of the same thread commits, its
      // drain makes the retirement durable too. Needed across threads (one thread's drain does not
      // complete another's flush), which the single-threaded simulator cannot model; the
      // recovery-side retire is only observable by crashing after recovery's first writes.
      "flush Redo.commitActions", "flush Redo.recoverLane", "drain Redo.recoverLane",
      "flush CcehSplit.finish", "drain CcehSplit.finish", "drain LevelBucket.move",
      "drain LevelResize.shrink", "flush LevelResize.shrink",
      // ESH: step 6 of a split (clear S's child and N's parent), redone by recovery when S still
      // names N; and recovery clearing N's parent link after S's split is finished.
      "flush EshSplit.finish", "drain EshSplit.finish", "flush EshRecovery.repair",
      // (e) Flushes of freshly zeroed memory: a new chunk of the pool file is zero on the media
      // already. Needed when the allocator hands out recycled memory, which no crash test makes
      // it do (DashLhArrayReuseTest recycles Dash-LH's arrays, but crashes only as kill -9 does,
      // where every store survives).
      "flush Allocator.formatRun", "flush LevelTable.create", "flush DashLhSplit.allocateArray",
      "flush NvlhTable.create", "flush NvdhTable.create",
      // (h) Not needed for crash consistency (Dash-LH): lines that recovery recomputes after a
      // crash, since every unclean open takes a new global version and recovers every segment
      // again — the overflow metadata of chained records (§4.6), a segment's repair and its
      // recovery version, the new global version. An open after a clean close trusts them
      // without recovery, but Pool.close writes the whole mapping back before its marker (the
      // clean-close images of DashLhCrashTest check it). Removal candidates.
      "flush DashBucket.flushMeta < DashLhSegment.insertChain",
      "flush DashBucket.flushMeta < DashLhSegment.appendNode",
      "flush DashBucket.flushMeta < DashLhSegment.deleteChained",
      "flush DashBucket.flushMeta < DashSegment.flushAllMeta < DashLhRecovery.repair",
      "flush DashBucket.flushMeta < DashLhSegment.flushChainMeta < DashLhRecovery.repair",
      // ... and a merge's rebuilt overflow metadata of p's buckets and chain (DashLhMerge step 2)
      "flush DashBucket.flushMeta < DashSegment.flushAllMeta < DashLhMerge.mergeLocked",
      "flush DashBucket.flushMeta < DashLhSegment.flushChainMeta < DashLhMerge.mergeLocked",
      "drain DashLhRecovery.repair", "flush DashRecovery.markRecovered", "drain DashRecovery.markRecovered",
      "flush DashLhTable.open", "drain DashLhTable.open",
      // ... and level hashing's count stored for the next clean open: LevelTable.close persists
      // it right before Pool.close, whose write-back of the whole mapping covers it; the crash
      // tests' setup stores it too (never armed: the setup is not crashed).
      "flush LevelTable.persistCleanSize < LevelTable.close", "drain LevelTable.persistCleanSize < LevelTable.close",
      "flush LevelTable.persistCleanSize < LevelCrashSupport.lambda$builder$0",
      "drain LevelTable.persistCleanSize < LevelCrashSupport.lambda$builder$0",
      // The same for ESH: the new global version written by an unclean open (only a clean open
      // reads it; an unclean one takes a new one), and the drain between recovery's repaired
      // metadata and the bucket states that say "recovered": states written before a crash never
      // match the next unclean open's global version, so only an open after a clean close trusts
      // them (and across threads: a reader's recovery may be followed by no drain of its thread).
      "flush EshTable.open", "drain EshTable.open", "drain EshRecovery.repair",
      // (i) ESH's overflow metadata (a home's OC and OFRB): rebuilt from the records by the lazy
      // recovery after every crash before the segment is used, so a crash never reads it; a clean
      // close writes it back with the whole mapping before its marker. Removal candidates.
      "flush EshSegment.insertOverflow", "flush EshSegment.delete",
      // Dash-EH (suites dash and dash-pointer; docs/reliability.md, "Dash-EH"):
      // (b) drains subsumed by the same thread's next drain before anything durable depends on
      // them: a merge's copies and its directory entries (the next redo step's entry drain), a
      // split's dropped half (finish's directory drain, before S leaves SPLITTING) and its final
      // NORMAL shapes (any next drain; until then recovery redoes the finish idempotently).
      // (The entry for finish's last drain also covers its directory drain, which is caught.)
      "drain DashSegment.bulkInsert", "drain DashMerge.finish", "drain DashSplit.split", "drain DashSplit.finish",
      // (h) the new global version at an unclean open, the repair's drain, the NORMAL shapes
      // recovery writes (a rolled-back merge, a NEW right half) and a split's final NORMAL
      // shapes: recomputed or finished by every unclean open and recovery; only an open after a
      // clean close trusts them (and refuses a current-version segment that is not NORMAL).
      "flush DashEhTable.open", "drain DashEhTable.open", "drain DashRecovery.repair",
      "flush DashRecovery.repair", "flush DashSplit.finish",
      // (i) the overflow metadata of a stash record in its target and probing buckets, rebuilt
      // by every segment recovery; in pointer mode also the stash bucket's own line before the
      // redo step that writes (and flushes) its bitmap word.
      "flush DashBucket.flushMeta < DashSegment.stashInsert", "flush DashBucket.flushMeta < DashSegment.deleteLocked",
      "flush DashBucket.flushMeta < DashSegment.deleteRecordLocked");

  /**
   * The suite of the classes ({@link JUnitSuite}), with their packages opened to JUnit: surefire
   * opens only the packages of the tests it was asked to run, and a module may open only its own.
   */
  static MutationCheck.Selective junit(List<String> classes) {
    Module self = SchemeMutationCheckTest.class.getModule();
    for (String c : classes) {
      self.addOpens(c.substring(0, c.lastIndexOf('.')), JUnitSuite.launcherModule());
    }
    return JUnitSuite.of(classes);
  }

  /** Sites in the crash tests' own code (a workload's flushes) are not what the check is about. */
  static boolean production(List<String> classes, String site) {
    return classes.stream().noneMatch(c -> site.contains(" " + c.substring(c.lastIndexOf('.') + 1) + "."));
  }

  static String withoutLines(String site) {
    return site.replaceAll(":\\d+", "");
  }

  @Test
  void inventoryOfTheLevelCrashTests() {
    Map<String, Long> sites = MutationCheck.inventory(junit(SUITES.get("level")));
    assertTrue(sites.keySet().stream().anyMatch(s -> s.startsWith("flush Level")), sites.toString());
    assertTrue(sites.keySet().stream().anyMatch(s -> s.startsWith("drain Level")), sites.toString());
    sites.keySet().forEach(s -> assertFalse(s.contains("(unknown)"), s));
  }

  @Test
  void everyFlushAndDrainIsCaught() throws IOException {
    String which = System.getProperty("pmhash.mutation", "");
    if (which.isEmpty() || which.equals("false")) {
      return; // the full check is opt-in; inventoryOfTheLevelCrashTests runs by default
    }
    List<String> names = which.equals("true") || which.equals("all")
        ? List.copyOf(SUITES.keySet())
        : Arrays.asList(which.split(","));
    // A regular expression found in the ids of the sites to mutate (default: all).
    Pattern only = Pattern.compile(System.getProperty("pmhash.mutation.site", ""));
    List<String> unexplained = new ArrayList<>();
    Path out = Path.of("target", "mutation");
    Files.createDirectories(out);
    for (String name : names) {
      List<String> classes = SUITES.get(name.strip());
      assertTrue(classes != null, "unknown suite '" + name + "'; known: " + SUITES.keySet());
      MutationCheck.Result r = MutationCheck.run(name.strip(), junit(classes),
          site -> production(classes, site) && only.matcher(site).find(), out.resolve(name.strip() + ".txt"));
      System.out.println(r.table());
      for (String s : r.survivors()) {
        if (!EXPLAINED.contains(withoutLines(s))) {
          unexplained.add(name + ": " + s);
        }
      }
    }
    assertEquals(new TreeSet<String>(), new TreeSet<>(unexplained), "sites no crash test catches");
  }
}
