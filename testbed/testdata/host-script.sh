set -eu
mount --make-rprivate /
mount -t proc proc /proc
printf %s "$1" > /proc/sys/kernel/hostname
mount -t tmpfs -o mode=0755,size=16m tmpfs /run
mkdir -m 0755 /run/sshd "$2"
mount --bind . "$2"
mount --bind "hosts/$1/opt-chaos" /opt/chaos
mount --bind "hosts/$1/var-lib-chaos" /var/lib/chaos
mount --bind "hosts/$1/tmp" /tmp
for f in /root/.bashrc /root/.profile /root/.bash_profile; do if [ -f "$f" ]; then mount --bind /dev/null "$f"; fi; done
exec "$4" -D -e -f "$3"
