#!/usr/bin/env bash
# Runs one bench runner (a class with a main method under a module's test sources) and
# prints its figures. Usage: bench/run.sh MODULE MAIN_CLASS [ARGS...]
#   bench/run.sh calico-api calico.api.selector.SelectorBench
# Builds in the reactor (no install), so the module's siblings come from this work tree.
# BENCH_MVN_ARGS: extra Maven arguments for that build, e.g. "-o" where the online build hangs.
set -euo pipefail
cd "$(dirname "$0")/.."
module=$1; main=$2; shift 2
mvn -q -B ${BENCH_MVN_ARGS:-} -pl "$module" -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test >/dev/null
cp="$module/target/test-classes:$module/target/classes:$(cat "$module/target/bench.classpath")"
# BENCH_JAVA_OPTS: extra JVM options, e.g. "-XX:StartFlightRecording=filename=/tmp/b.jfr,settings=profile".
exec java -Xms1g -Xmx4g ${BENCH_JAVA_OPTS:-} -cp "$cp" "$main" "$@"
