#!/usr/bin/env bash
# What a Debian/Ubuntu machine needs before packaging/build_linux.py and verify_bundle.py:
# the Qt runtime libraries the bundle leaves to the system (the .deb's Depends), Xvfb for
# the smoke test on a real X server, dpkg-deb and objdump; and user namespaces, so that
# verify_bundle.py can cut the network with `unshare -rn` without root.  Uses sudo when
# not root.  The release workflow's Linux job runs this; so can a maintainer.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  libegl1 libgl1 libopengl0 libglib2.0-0 libfontconfig1 libfreetype6 libdbus-1-3 \
  libxkbcommon0 libxkbcommon-x11-0 libx11-6 libx11-xcb1 libxcb1 libxcb-cursor0 libxcb-icccm4 \
  libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 \
  libxcb-xkb1 libxcb-xinerama0 xvfb xauth fonts-dejavu-core dpkg binutils util-linux \
  desktop-file-utils
# Ubuntu 23.10+ lets AppArmor refuse unprivileged user namespaces (unshare -rn fails)
if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then
  $SUDO sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0
fi
# verify_bundle.py takes `unshare -n` as root, `unshare -rn` otherwise: one must work
{ unshare -n true 2>/dev/null || unshare -rn true; } && echo "network namespaces: available"
