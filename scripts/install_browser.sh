#!/bin/sh
# Installs the headless browser that tests/site/test_browser.py drives: Debian's Chromium and
# the matching ChromeDriver (both come from the same Debian source package, so their
# versions always agree; nothing is downloaded from outside the Debian mirror).
#
#   exit 0  chromium and chromedriver are on PATH (already, or installed now)
#   exit 3  they are missing and cannot be installed here (not root, or no apt-get);
#           the test then skips with this script's message
#   other   apt-get failed (the test reports its output)
set -eu

have() { command -v "$1" >/dev/null 2>&1; }

if have chromium && have chromedriver; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "chromium/chromedriver missing and not running as root: run 'apt-get install -y chromium chromium-driver' as root" >&2
    exit 3
fi
if ! have apt-get; then
    echo "chromium/chromedriver missing and there is no apt-get to install them" >&2
    exit 3
fi
export DEBIAN_FRONTEND=noninteractive
# The test suite's parallel workers may run this and the other install script at once:
# one apt-get at a time (flock waits for the other's lock), not a failure on dpkg's.
exec 9>/tmp/.tiling-course-apt.lock
flock 9
apt-get update -q
apt-get install -y -q chromium chromium-driver
have chromium && have chromedriver
