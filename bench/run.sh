#!/usr/bin/env bash
# Runs one bench runner (a class with a main method under a module's test sources) and
# prints its figures. Usage: bench/run.sh MODULE MAIN_CLASS [ARGS...]
#   bench/run.sh calico-api calico.api.selector.SelectorBench
set -euo pipefail
cd "$(dirname "$0")/.."
module=$1; main=$2; shift 2
mvn -q -B -pl "$module" -am install -DskipTests >/dev/null
mvn -q -B -pl "$module" dependency:build-classpath -Dmdep.outputFile=target/bench.classpath \
    -Dmdep.includeScope=test >/dev/null
mvn -q -B -pl "$module" test-compile >/dev/null
cp="$module/target/test-classes:$module/target/classes:$(cat "$module/target/bench.classpath")"
exec java -Xms1g -Xmx4g -cp "$cp" "$main" "$@"
