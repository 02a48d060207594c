# The slim rootfs has no man pages, and OpenJDK's postinst registers java's with update-alternatives,
# which needs the directory (the usual fix on slim Debian images).
mkdir -p /usr/share/man/man1
