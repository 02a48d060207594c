# Run by build.sh after the image is built: the toolchain compiles a program with no network.
set -euo pipefail
docker run --rm --network none "$TAG" sh -c 'mkdir -p /tmp/v && cd /tmp/v && printf "module v\ngo 1.26\n" >go.mod && printf "package main\nfunc main() { println(\"ok\") }\n" >m.go && go build -o v . && ./v'
