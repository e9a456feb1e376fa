#!/usr/bin/env bash
# Regenerates the hostile-input table of docs/PERFORMANCE.md: builds
# clrspy, writes the crafted files (go run ./internal/hostile), runs each
# listed command on each file and prints one Markdown row per run: file
# (size), command, exit status, the last line clrspy wrote to stderr (its
# error or warning; "-" when none), peak RSS and wall time.
#
#   scripts/hostile.sh [DIR]   # DIR keeps the files (default: a temp dir, removed)
#
# Commands run with stdout to /dev/null, under `timeout 600`; exit 124 is a
# timeout. Needs /usr/bin/time (GNU time).
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
keep=${1:-}
dir=${keep:-$(mktemp -d /tmp/clrspy-hostile.XXXXXX)}
mkdir -p "$dir"
[ -z "$keep" ] && trap 'rm -rf "$dir"' EXIT
bin="$dir/clrspy"
CGO_ENABLED=0 $GO build -trimpath -o "$bin" ./cmd/clrspy || exit 1
manifest=$($GO run ./internal/hostile -dir "$dir/files") || exit 1

args_for() { # command file -> arguments
	case "$1" in
	stat) echo "stat $2" ;;
	gc) echo "gc --level none $2" ;;
	profile) echo "profile --format folded -o /dev/null $2" ;;
	heap) echo "heap $2" ;;
	locks) echo "locks $2" ;;
	esac
}

echo "| file | command | exit | message (last stderr line) | peak RSS | wall |"
echo "|---|---|---|---|---|---|"
while IFS=$'\t' read -r name cmds what; do
	f="$dir/files/$name"
	size=$(stat -c %s "$f")
	human=$(numfmt --to=iec --suffix=B "$size")
	for c in ${cmds//,/ }; do
		/usr/bin/time -f '%M %e' -o "$dir/time" timeout 600 "$bin" $(args_for "$c" "$f") >/dev/null 2>"$dir/err"
		code=$?
		# GNU time's last line is ours ("Command exited with ..." may precede it).
		read -r rss wall < <(tail -1 "$dir/time") || { rss=0; wall=0; }
		msg=$(tail -1 "$dir/err" | sed "s|$dir/files/||g; s/|/\\\\|/g")
		[ -z "$msg" ] && msg="-"
		[ "$code" = 124 ] && msg="(timed out after 600 s)"
		printf '| `%s` (%s) | %s | %s | %s | %s MB | %s s |\n' "$name" "$human" "$c" "$code" "$msg" "$(awk "BEGIN{printf \"%.0f\", $rss/1024}")" "$wall"
	done
done <<<"$manifest"
echo
echo "Files (go run ./internal/hostile):"
while IFS=$'\t' read -r name cmds what; do
	printf -- '- `%s`: %s\n' "$name" "$what"
done <<<"$manifest"
