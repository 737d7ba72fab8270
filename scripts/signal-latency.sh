#!/usr/bin/env bash
# Measures how long dstein takes to stop after Ctrl-C (SIGINT) in each
# long-running phase: runs cmd/dstein's TestSIGINTInEveryPhase COUNT times
# (default 5) and prints, per phase, the median and the largest latency from
# the signal to the process's exit (exit code 130 every time, or the test
# fails). The watchdog that ends the process 0.8 s after the signal is off
# during the test (DSTEIN_SIGNAL_GRACE=off), so the numbers are those of the
# phases' own polling. Target: 1 s. BENCHMARKS.md quotes the output.
# Usage: scripts/signal-latency.sh [count]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
log=$(mktemp)
go test ./cmd/dstein -run 'TestSIGINTInEveryPhase' -count "$count" -v -timeout 60m > "$log" 2>&1 || { tail -50 "$log"; exit 1; }
# Lines look like: "signal_test.go:140: GWG: exit 130 12ms after SIGINT".
grep -E ': exit [0-9]+ [0-9.]+(µs|ms|s) after SIGINT' "$log" | sed -E 's/^.*signal_test\.go:[0-9]+: //' |
	awk '{
		phase = $0; sub(/: exit [0-9]+ .*$/, "", phase)
		t = $0; sub(/^.*: exit [0-9]+ /, "", t); sub(/ after SIGINT.*$/, "", t)
		ms = t + 0
		if (t ~ /µs$/) ms = ms / 1000; else if (t ~ /ms$/) ms = ms; else if (t ~ /s$/) ms = ms * 1000
		n[phase]++; v[phase, n[phase]] = ms
		if (!(phase in seen)) { seen[phase] = 1; order[++k] = phase }
	}
	END {
		printf "%-40s %6s %10s %10s\n", "phase", "runs", "median ms", "max ms"
		worst = 0
		for (i = 1; i <= k; i++) {
			p = order[i]; m = n[p]
			for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[p, b] < v[p, a]) { x = v[p, a]; v[p, a] = v[p, b]; v[p, b] = x }
			med = (m % 2) ? v[p, (m + 1) / 2] : (v[p, m / 2] + v[p, m / 2 + 1]) / 2
			printf "%-40s %6d %10.0f %10.0f\n", p, m, med, v[p, m]
			if (v[p, m] > worst) worst = v[p, m]
		}
		printf "largest latency: %.0f ms (target 1000 ms)\n", worst
	}'
rm -f "$log"
