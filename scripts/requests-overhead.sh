#!/usr/bin/env bash
# The ASP.NET Core workload's throughput (wrk, as fast as it serves) with a
# `clrspy requests` session attached against none, in alternating pairs in
# one run: a shared machine's speed drifts too much to compare figures
# taken at different times. Each pair runs off then on, or on then off
# (alternately), on the same server process.
#
#   scripts/requests-overhead.sh [PAIRS] [SECONDS] [-- CLRSPY REQUESTS FLAGS...]
#
# PAIRS (default 5) pairs of SECONDS (default 5) of wrk -t2 -c8 over the
# workload's three routes. The flags after -- go to `clrspy requests`
# (--no-status, --no-flow, ...). Prints each pair's requests/s and the
# median of on/off. Needs wrk, dotnet (to build the workload once) and Go.
set -euo pipefail
pairs=${1:-5}
secs=${2:-5}
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
flags=("$@")
here=$(cd "$(dirname "$0")/.." && pwd)
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
work=$(mktemp -d)
server=
cleanup() { exec 3>&- 2>/dev/null; [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM # through EXIT: the server does not outlive the script

cd "$here"
. ../shared/bin/go-env.sh 2>/dev/null || true
go build -o "$work/clrspy" ./cmd/clrspy
exe=testdata/workloads/bin/aspnet/AspNet
if [ ! -x "$exe" ]; then
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 MSBUILDDISABLENODEREUSE=1 \
		dotnet build testdata/workloads/AspNet -c Release -o testdata/workloads/bin/aspnet -nologo -v quiet \
		--artifacts-path testdata/workloads/obj/aspnet >&2
fi
cat >"$work/routes.lua" <<'EOF'
local paths = {"/alloc/1", "/lock/2", "/call/3"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % 3) + 1])
end
EOF

# The server: a line "stop" on its stdin (fd 3 here) ends it.
mkfifo "$work/in"
"$exe" gen2EveryMs=1000 holdMs=1 backendMs=1 <"$work/in" >"$work/server.out" 2>"$work/server.err" &
server=$!
exec 3>"$work/in"
url=
for _ in $(seq 120); do
	url=$(grep -o 'listening http://[^ ]*' "$work/server.err" | cut -d' ' -f2 || true)
	[ -n "$url" ] && break
	sleep 0.5
done
[ -n "$url" ] || { echo "the workload did not listen:" >&2; cat "$work/server.err" >&2; exit 1; }

rate() { # one wrk run: requests/s
	wrk -t2 -c8 -d"${secs}s" -s "$work/routes.lua" "$url" | awk '/^Requests\/sec:/ {print $2}'
}
off() { rate; }
on() {
	"$work/clrspy" requests --pid "$server" --json -o "$work/requests.json" "${flags[@]}" 2>"$work/clrspy.err" &
	local c=$!
	sleep 2 # attached: the session's providers are on before the load starts
	local r
	r=$(rate)
	kill -INT "$c"
	wait "$c" || { echo "clrspy requests failed:" >&2; cat "$work/clrspy.err" >&2; exit 1; }
	local n
	n=$(grep -o '"requests_total": [0-9]*' "$work/requests.json" | head -1 | awk '{print $2}')
	echo "$r $n"
}

off >/dev/null # warm up: JIT, connections, the pool's threads
echo "clrspy requests ${flags[*]:-(default session)}: ${pairs} pairs of ${secs} s, wrk -t2 -c8"
printf '%4s %12s %12s %8s %10s\n' pair off_rps on_rps on/off seen
ratios=()
for p in $(seq "$pairs"); do
	if [ $((p % 2)) = 1 ]; then
		a=$(off); read -r b n < <(on)
	else
		read -r b n < <(on); a=$(off)
	fi
	r=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
	ratios+=("$r")
	printf '%4d %12s %12s %8s %10s\n' "$p" "$a" "$b" "$r" "$n"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "median on/off %.3f\n", m}'
echo stop >&3
