# Sourced by the scripts that need Debian packages: install_deps PKG...
# installs the missing ones (as root, or through sudo), running
# 'apt-get update' first only when needed.
install_deps() {
	missing=
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
		{ $SUDO apt-get update -q >/dev/null && \
		  $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null; }
}
