#!/usr/bin/env bash
# Builds every module and runs every test (unit tests with Surefire, *IT integration tests
# with Failsafe) from a clean tree, after installing what is missing. Prints a per-module
# summary and exits non-zero when anything failed.
#
#   scripts/test.sh                      # everything
#   scripts/test.sh -pl libcalico -am    # extra arguments go to Maven
#
# Works non-interactively as root on a fresh Debian 12 (and under CI=true); needs no running
# services: tests start their own (etcd, ...) on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

# shellcheck source=lib/install-deps.sh
source scripts/lib/install-deps.sh

section() { printf '\n==== %s ====\n' "$*"; }

section "Dependencies"
calico_install_deps
# The Kubernetes control plane the tests run on, built from pinned Go modules once per machine.
scripts/control-plane.sh build
# helm, for the chart's tests (charts/), built from its pinned Go module once per machine.
scripts/helm.sh build
# The chart's images (scripts/images.sh: Debian bases by mmdebstrap, cached; one image per service
# by Jib in the reactor, then ChartImagesTest) unless CALICO_TEST_IMAGES=0: about 1 minute more
# on a quiet machine with the bases cached (2-4 under load), 1.5 more once to build the bases.
image_args=()
if [[ ${CALICO_TEST_IMAGES:-1} == 1 ]]; then
    mapfile -t image_args < <(scripts/images.sh maven-args)
    ((${#image_args[@]} == 4)) || { echo "scripts/images.sh maven-args failed" >&2; exit 1; }
    image_args=(-Pimages "${image_args[@]}")
    echo "the images are built and tested by charts' ChartImagesTest (CALICO_TEST_IMAGES=0 skips them)"
fi
# charts' ChartNodeTest: calico-node on a real kubelet (containerd, runc, kubelet on this machine)
# with the images above; opt-in, several minutes (charts/DESIGN.md): CALICO_TEST_NODE=1.
if [[ ${CALICO_TEST_NODE:-0} == 1 ]]; then
    ((${#image_args[@]} > 0)) || { echo "CALICO_TEST_NODE=1 needs the images (CALICO_TEST_IMAGES=1)" >&2; exit 1; }
    export CALICO_TEST_NODE
    echo "charts' ChartNodeTest runs calico-node on a real kubelet (CALICO_TEST_NODE=1)"
fi
# sed -n reads all its input, so the version commands never die of SIGPIPE under pipefail.
java -version 2>&1 | sed -n 1p
mvn -B -v 2>/dev/null | sed -n '1{s/\x1b\[[0-9;]*m//g;p}'
if [[ ${CI:-} == true ]]; then
    echo "CI=true: batch mode, no colour, no download progress"
fi

# Two modules at a time (CALICO_MAVEN_THREADS): most tests wait on processes, the kernel and the
# API server rather than on the CPU, and felix-service's chain alone is a third of the serial time.
# The smart builder (.mvn/extensions.xml) starts that chain first.
threads=${CALICO_MAVEN_THREADS:-2}
section "mvn clean verify (${threads} modules at a time)"
started=$SECONDS
set +e
# Debian's Maven 3.8.7 prints ANSI resets even in batch mode; strip them for plain logs.
# --fail-at-end: a failing module stops only the modules built on it, so one run shows every failure.
mvn -B --no-transfer-progress -Dstyle.color=never -b smart -T "$threads" --fail-at-end clean verify "${image_args[@]}" "$@" 2>&1 \
    | sed -u 's/\x1b\[[0-9;]*m//g'
status=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - started))

# Local mode end to end (./calico up/status/down with real workloads and flows), on the jars
# Maven just built: only after a passing build, and only as root (it creates namespaces).
section "local suite (scripts/test-local-suite.sh)"
# Once per datastore: kubernetes (the default: the real control plane), etcd and memory
# (apiserver-service holding the store), a few minutes each; etcd's run uses --encapsulation vxlan
# (felix's VXLAN routes, no BIRD), the other two none (BIRD's routes), so both modes are covered
# without a fourth run.
export CALICO_TEST_DATASTORES=${CALICO_TEST_DATASTORES:-kubernetes etcd:vxlan memory}
suite_passed=0; suite_failed=0; suite_skipped=0; suite_status=0
if ((status != 0)); then
    echo "skipped: the Maven build failed"; suite_skipped=1
elif ((EUID != 0)); then
    echo "skipped: needs root (network namespaces)"; suite_skipped=1
elif [[ -d .calico-run ]]; then
    echo "skipped: a local suite is up in this checkout (.calico-run/); ./calico down first"; suite_skipped=1
elif ! missing_jar=$(scripts/test-local-suite.sh --missing-jar); then
    echo "skipped: this build did not produce $missing_jar (a partial build?)"; suite_skipped=1
else
    set +e
    scripts/test-local-suite.sh 2>&1 | tee /tmp/local-suite.$$.log
    suite_status=${PIPESTATUS[0]}
    set -e
    read -r suite_passed suite_failed < <(sed -n 's/^local-suite: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' /tmp/local-suite.$$.log | tail -n 1)
    rm -f /tmp/local-suite.$$.log
    # No closing line (it crashed): one failure, so the run cannot pass.
    if [[ -z ${suite_passed:-} ]]; then suite_passed=0; suite_failed=1; fi
    if ((suite_status != 0 && suite_failed == 0)); then suite_failed=1; fi
fi

# Sums tests/failures/errors/skipped over the JUnit XML reports in one directory.
count_reports() {
    local dir=$1
    compgen -G "$dir/TEST-*.xml" >/dev/null || { echo "0 0 0 0"; return; }
    # Counts <testcase> elements rather than trusting each <testsuite> header: engines such as
    # jqwik report their own cases in the body but not always in the header's totals.
    cat "$dir"/TEST-*.xml | awk '
        /<testcase[ >]/ { t += gsub(/<testcase[ >]/, "&") }
        /<failure[ >]/  { f += gsub(/<failure[ >]/, "&") }
        /<error[ >]/    { e += gsub(/<error[ >]/, "&") }
        /<skipped[ >\/]/ { s += gsub(/<skipped[ >\/]/, "&") }
        END { print t + 0, f + 0, e + 0, s + 0 }'
}

section "Summary"
printf '%-22s %-12s %6s %6s %6s %6s\n' MODULE KIND TESTS FAIL ERROR SKIP
total_tests=0; total_bad=0; total_skipped=0
for module_dir in */; do
    module=${module_dir%/}
    [[ -f $module/pom.xml ]] || continue
    for kind in surefire failsafe; do
        read -r tests failures errors skipped < <(count_reports "$module/target/$kind-reports")
        ((tests > 0)) || continue
        label=$([[ $kind == surefire ]] && echo unit || echo integration)
        printf '%-22s %-12s %6d %6d %6d %6d\n' "$module" "$label" "$tests" "$failures" "$errors" "$skipped"
        total_tests=$((total_tests + tests)); total_bad=$((total_bad + failures + errors))
        total_skipped=$((total_skipped + skipped))
    done
done
if ((suite_passed + suite_failed + suite_skipped > 0)); then
    printf '%-22s %-12s %6d %6d %6d %6d\n' local-suite e2e "$((suite_passed + suite_failed + suite_skipped))" \
        "$suite_failed" 0 "$suite_skipped"
    total_tests=$((total_tests + suite_passed + suite_failed + suite_skipped))
    total_bad=$((total_bad + suite_failed)); total_skipped=$((total_skipped + suite_skipped))
fi
failed_tests=$(grep -hE '<<< (FAILURE|ERROR)!' ./*/target/surefire-reports/*.txt ./*/target/failsafe-reports/*.txt 2>/dev/null \
    | grep -v '^Tests run' | sed 's/ -- Time elapsed.*//' || true)
if [[ -n $failed_tests ]]; then
    echo
    echo "Failed tests:"
    sed 's/^/  /' <<<"$failed_tests"
    # Why, in brief: the start of each failing test's report (CI keeps only the end of this output).
    echo
    echo "Why (the first lines of each failure in its report):"
    grep -lE '<<< (FAILURE|ERROR)!' ./*/target/surefire-reports/*.txt ./*/target/failsafe-reports/*.txt 2>/dev/null \
        | while read -r report; do
            echo "  == ${report#./}"
            awk '/<<< (FAILURE|ERROR)!/ && !/^Tests run/ { n = 20 } n > 0 { print "  " $0; n-- }' "$report" | cut -c1-300
        done | head -n 160
fi
if ((suite_failed > 0)); then
    echo
    echo "Failed local-suite checks: see the FAIL lines of the local suite section"
fi
echo
if ((status == 0 && suite_failed > 0)); then
    status=1
    echo "RESULT: FAIL (local suite: $suite_failed failing checks of $((suite_passed + suite_failed)); $total_tests tests run; ${elapsed}s)"
elif ((status == 0)); then
    echo "RESULT: PASS ($total_tests tests, ${elapsed}s)"
else
    echo "RESULT: FAIL (mvn exit $status; $total_bad failing of $total_tests tests run; ${elapsed}s)"
fi
# The plain closing line CI reads: executed tests that passed, failed (or errored), skipped.
echo "Tests: $((total_tests - total_bad - total_skipped)) passed, $total_bad failed, $total_skipped skipped"
exit "$status"
