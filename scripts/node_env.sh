# shellcheck shell=bash disable=SC2034  # its variables are for the scripts that source it
# The one place that picks the Node llmgate runs; sourced, from the
# repository root, by scripts/setup, test, run and bench.
# node-llama-cpp (tests/node) needs Node >= 20 and Debian bookworm's nodejs
# is 18: where the machine's node is older than 20, or absent, the Node 20
# that scripts/setup installs into build/node-runtime goes first on PATH
# (before it is there, PATH simply finds the machine's). Every "node" and
# "npm" after this is then that one: in the scripts, in npm's install
# scripts, and in the tests and examples that spawn node. A machine's node
# of 20 or newer is used as it is, and nothing is installed.
# Sets: PATH (exported), llmgate_machine_path (PATH without the runtime),
# llmgate_node_from_build (1 where the runtime is the one to use).

llmgate_node_minimum=20   # tests/node/node_process.hpp asks for the same
# Pinned as package-lock.json pins the npm packages: Node's own Linux build,
# which npm serves as node-linux-<arch>, and npm 10.8.2, the npm Node's own
# 20.20.2 ships with (node-linux-* holds bin/node only, and Debian's npm
# finds its modules through Debian's node alone). The integrity of each
# tarball, as the registry gave it, is checked by scripts/setup.
llmgate_node_version=20.20.2
llmgate_node_integrity_x64=sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
llmgate_node_integrity_arm64=sha512-LCXJnNTFiyGuYBw2gZSI5OBFMbkjAPt8sqD/NKrWoE2QmDgSubTqFng6GaNJ9EJ8HpxBMGcWWpbbcs4Vo+CnGg==
llmgate_npm_version=10.8.2
llmgate_npm_integrity=sha512-x/AIjFIKRllrhcb48dqUNAAZl0ig9+qMuN91RpZo3Cb2+zuibfh+KISl6+kVVyktDz230JKc208UkQwwMqyB+w==
llmgate_node_runtime=$PWD/build/node-runtime

# The major version of the node that PATH $1 finds; 0 where there is none.
llmgate_node_major() {
  local version
  version=$(PATH=$1; node --version 2>/dev/null) || version=
  version=${version#v}
  version=${version%%.*}
  [[ $version =~ ^[0-9]+$ ]] && echo "$version" || echo 0
}

# The machine's PATH: without the runtime, which a script that sourced this
# file passes on to the scripts it runs (scripts/test runs scripts/setup).
llmgate_machine_path=:$PATH:
llmgate_machine_path=${llmgate_machine_path//":$llmgate_node_runtime/bin:"/:}
llmgate_machine_path=${llmgate_machine_path#:}
llmgate_machine_path=${llmgate_machine_path%:}

if [ "$(llmgate_node_major "$llmgate_machine_path")" -ge "$llmgate_node_minimum" ]; then
  llmgate_node_from_build=0
  PATH=$llmgate_machine_path
else
  llmgate_node_from_build=1
  PATH=$llmgate_node_runtime/bin:$llmgate_machine_path
fi
export PATH
