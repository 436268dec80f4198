#!/bin/sh
# Installs what the grader's sandbox needs (tiling_course.grading.sandbox): bubblewrap, and
# util-linux's prlimit and setpriv (on every Debian and Ubuntu system already). The tests
# that grade run this first, as tests/site/test_browser.py runs install_browser.sh.
#
#   exit 0  bwrap, prlimit and setpriv are on PATH (already, or installed now)
#   exit 3  they are missing and cannot be installed here (not root, or no apt-get);
#           the grading tests then skip with this script's message, and the grader refuses
#           to grade
#   other   apt-get failed (the test reports its output)
set -eu

have() { command -v "$1" >/dev/null 2>&1; }

if have bwrap && have prlimit && have setpriv; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "bubblewrap missing and not running as root: run 'apt-get install -y bubblewrap' as root" >&2
    exit 3
fi
if ! have apt-get; then
    echo "bubblewrap missing and there is no apt-get to install it" >&2
    exit 3
fi
export DEBIAN_FRONTEND=noninteractive
# The test suite's parallel workers may run this and the other install script at once:
# one apt-get at a time (flock waits for the other's lock), not a failure on dpkg's.
exec 9>/tmp/.tiling-course-apt.lock
flock 9
apt-get update -q
apt-get install -y -q bubblewrap util-linux
have bwrap && have prlimit && have setpriv
