#!/usr/bin/env bash
# Runs the benchmark suite and the papers' experiments into docs/benchmarks/results/, then
# draws the charts and docs/benchmarks.md from them (io.pmhash.jmh.charts.Charts).
#
#   pmhash-jmh/bench/run.sh smoke   # the committed set: short, scaled (about 30 minutes)
#   pmhash-jmh/bench/run.sh full    # the JMH defaults and every experiment, scaled (hours)
#   pmhash-jmh/bench/run.sh charts  # only redraw charts and docs from the committed results
#   pmhash-jmh/bench/run.sh experiments NAME...  # only these experiments (Experiments --help
#                                   # lists them), then the charts; machine.txt gets a line for them
#   pmhash-jmh/bench/run.sh jmh NAME 'REGEX' [JMH options]  # one JMH result file, then the charts
#
# Environment: PMHASH_BENCH_DIR (pool files; default /dev/shm, tmpfs), PMHASH_BENCH_DURABILITY
# (experiments; default PMEM_EMULATED), PMHASH_BENCH_NOTE (a line for the docs, e.g. "quiet machine").
# Run it from anywhere; it works in the repository root. DRAM or tmpfs numbers are not
# persistent-memory numbers.
set -euo pipefail
# PMDK (the llpl benchmarks) flushes with msync on a file system that is not persistent memory;
# forced, it uses the flush instructions of PMEM_EMULATED, the comparison that means something.
export PMEM_IS_PMEM_FORCE=${PMEM_IS_PMEM_FORCE:-1}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
mode=${1:-smoke}
[ $# -gt 0 ] && shift
dir=${PMHASH_BENCH_DIR:-/dev/shm}
durability=${PMHASH_BENCH_DURABILITY:-PMEM_EMULATED}
note=${PMHASH_BENCH_NOTE:-}
results=docs/benchmarks/results
java="$(./pmhash java-home)/bin/java"
jar=pmhash-jmh/target/benchmarks.jar
if [ "$mode" != charts ]; then
  ./pmhash mvn -o -q -pl pmhash-jmh -am package -DskipTests
fi
mkdir -p "$results"
if [ "$mode" = smoke ] || [ "$mode" = full ]; then
  { # The machine, for the docs (no paths: only what the hardware and software are).
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "cores: $(nproc)"
    echo "memory: $(awk '/MemTotal/ {printf "%d GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel: $(uname -sr)"
    echo "jdk: $("$java" -version 2>&1 | sed -n 2p)"
    echo "pool file system: $(stat -f -c %T "$dir")"
    echo "taken: $(date -u +%Y-%m-%dT%H:%MZ), run.sh $mode"
    echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min; each CSV records its own)"
    [ -n "$note" ] && echo "note: $note"
  } > "$results/machine.txt"
fi

this_machine() { # one line for a partial run: the machine may differ from the full run's
  echo "on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $(uname -sr);" \
    "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

jmh() { # $1 = result name, rest = JMH arguments
  local name=$1; shift
  "$java" -Dpmhash.jmh.dir="$dir" -cp "$jar" io.pmhash.jmh.AllSchemes "$@" -rf json -rff "$results/$name.json"
  # The JSON names the JVM binary by its path on this machine: keep only its name.
  sed -i -E 's|("jvm" : ")[^"]*/([^/"]+)"|\1\2"|' "$results/$name.json"
  # And where its pool files went: the file system type is in machine.txt, not the path.
  sed -i -E 's|(-Dpmhash\.jmh\.dir=)[^"]*"|\1DIR"|' "$results/$name.json"
}

experiments() {
  "$java" --enable-native-access=ALL-UNNAMED -Xss4m -cp "$jar" io.pmhash.jmh.workload.Experiments \
    --out "$results" --dir "$dir" --durability "$durability" "$@"
}

case "$mode" in
  smoke)
    short=(-f 1 -wi 1 -i 2 -w 1s -r 1s)
    jmh maps 'TableBenchmark|ConcurrentHashMapBenchmark|ChronicleMapBenchmark|MapDbBenchmark|RocksDbBenchmark|LlplHeapBenchmark' \
      "${short[@]}" -p durability=PMEM_EMULATED,VOLATILE -p keys=uniform -p records=1000000
    jmh baselines 'DowncallBenchmark|ProbeBenchmark|PersistenceBenchmark|HashingBenchmark|EpochBenchmark' "${short[@]}"
    jmh pointer-maps PointerMapBenchmark "${short[@]}" -p scheme=dash-eh -p durability=PMEM_EMULATED,VOLATILE -p keys=uniform \
      -p records=1000000 -p keyBytes=16
    experiments dash-per-op dash-scaling dash-load-factor dash-stash-sweep dash-segment-size dash-recovery dash-after-crash \
      group-latency group-size-sweep group-space group-recovery esh-load-factor esh-scaling esh-recovery nvlh-value-size
    ;;
  jmh)  # one result file: run.sh jmh NAME 'REGEX' [JMH options]
    [ $# -gt 1 ] || { echo "usage: $0 jmh NAME REGEX [JMH options]" >&2; exit 2; }
    echo "taken: $(date -u +%Y-%m-%dT%H:%MZ), run.sh jmh $*; $(this_machine)" >> "$results/machine.txt"
    jmh "$@"
    ;;
  experiments)
    [ $# -gt 0 ] || { echo "usage: $0 experiments NAME... (Experiments --help lists them)" >&2; exit 2; }
    echo "taken: $(date -u +%Y-%m-%dT%H:%MZ), run.sh experiments $*; $(this_machine)" >> "$results/machine.txt"
    if [ -n "$note" ] && ! grep -qxF "note: $note" "$results/machine.txt"; then echo "note: $note" >> "$results/machine.txt"; fi
    experiments "$@"
    ;;
  full)
    jmh maps 'TableBenchmark|ConcurrentHashMapBenchmark|ChronicleMapBenchmark|MapDbBenchmark|RocksDbBenchmark|LlplHeapBenchmark'
    jmh maps-2threads 'TableBenchmark|ConcurrentHashMapBenchmark|ChronicleMapBenchmark|MapDbBenchmark|RocksDbBenchmark|LlplHeapBenchmark' -t 2
    jmh baselines 'DowncallBenchmark|ProbeBenchmark|PersistenceBenchmark|HashingBenchmark|EpochBenchmark'
    jmh pointer-maps PointerMapBenchmark -p scheme=dash-eh
    experiments all
    ;;
  charts) ;;
  *) echo "usage: $0 smoke|full|charts|experiments NAME...|jmh NAME REGEX [options]" >&2; exit 2 ;;
esac
"$java" -Djava.awt.headless=true -cp "$jar" io.pmhash.jmh.charts.Charts --results "$results" \
  --images docs/benchmarks --doc docs/benchmarks.md   # the note is in machine.txt
