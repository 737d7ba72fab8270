#!/usr/bin/env bash
# Reproduces the numbers in BENCHMARKS.md: go benchmarks of the hot paths
# and the wall time and peak memory of the main commands.
# Usage: scripts/bench.sh [count]   (default count 5; takes a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
echo "## go test -bench (count $count)"
go test -run '^$' -bench 'StepRBM|StepCategorical1D|ReferenceProducts' -benchmem -count "$count" ./sampler/gfsvgd/
go test -run '^$' -bench 'ABt' -count "$count" ./internal/gemm/
go test -run '^$' -bench . -benchmem -count "$count" ./sampler/gibbs/ ./sampler/gwg/ ./sampler/dmala/ ./sampler/dlmc/ ./sampler/pas/ ./sampler/dhmc/ ./sampler/pt/ ./sampler/sw/ ./metrics/
go test -run '^$' -bench . -benchmem -count "$count" ./diag/ ./stein/
go test -run '^$' -bench . -benchmem -benchtime 3x -count "$count" ./compress/
go test -run '^$' -bench 'Diagnose' -benchmem -benchtime 5x -count "$count" ./infer/
go test -run '^$' -bench 'GridPairs|RBMPairs|VEPairs' -benchmem -benchtime 3x -count "$count" ./exact/
go test -run '^$' -bench 'TrainStep' -benchmem -benchtime 40x -count "$count" ./bnn/
go test -run '^$' -bench 'Train' -benchtime 2x -count 3 ./ensemble/
go test -run '^$' -bench 'NewIsingGrid|IsingGridSample' -benchmem -count "$count" ./exact/
go test -run '^$' -bench 'RBMTruth' -benchtime 1x -count 3 ./exact/
go test -run '^$' -bench . -benchtime 3x -count "$count" ./gof/
echo
echo "## peak memory and wall time of the main commands"
bin=$(mktemp -d)/dstein
go build -o "$bin" ./cmd/dstein
tmp=$(mktemp -d)
echo '{"type":"rbm","visible":1000,"hidden":25,"random":{"w_std":0.2236,"bias_std":1,"seed":7}}' > "$tmp/rbm1000.json"
measure() {
	/usr/bin/time -f "%e s wall, %M KB peak RSS" "$bin" "$@" > /dev/null 2> "$tmp/time.txt" || { cat "$tmp/time.txt"; exit 1; }
	echo "dstein $*: $(tail -1 "$tmp/time.txt")"
}
measure demo
measure sample --model examples/ising-grid.json --method transport --n 100 --iters 500 --out "$tmp/s.csv"
measure sample --model examples/rbm-random.json --method transport --n 1000 --iters 50 --out "$tmp/s.csv"
measure sample --model "$tmp/rbm1000.json" --method transport --n 1000 --iters 10 --out "$tmp/s.csv"
measure sample --model examples/ising-grid.json --method gibbs --n 100 --iters 500 --out "$tmp/s.csv"
measure sample --model examples/ising-grid.json --out "$tmp/s.csv"
measure sample --model examples/rbm-random.json --out "$tmp/s.csv"
measure sample --model "$tmp/rbm1000.json" --out "$tmp/s.csv"
measure sample --model examples/potts5-torus.json --out "$tmp/s.csv"
measure sample --model examples/ising-grid.json --method tempering --out "$tmp/s.csv"
measure sample --model examples/rbm-random.json --method tempering --out "$tmp/s.csv"
measure sample --model examples/ising-grid.json --method gibbs --chains 4 --draws 1000 --out "$tmp/s.csv"
measure sample --model "$tmp/rbm1000.json" --method gibbs --chains 4 --draws 1000 --out "$tmp/s.csv"
measure sample --model examples/ising-strong.json --method pt --chains 4 --draws 1000 --out "$tmp/s.csv"
measure sample --model examples/ising-strong.json --method sw --chains 4 --draws 1000 --out "$tmp/s.csv"
measure sample --model examples/rbm-random.json --method dhmc --n 100 --iters 500 --out "$tmp/s.csv"
measure sample --model examples/rbm-random.json --method exact --n 1000 --out "$tmp/s.csv"
"$bin" sample --model examples/ising-grid.json --method exact --n 1000 --out "$tmp/g.csv" > /dev/null
for t in gfksd dksd bksd mmd; do
	measure gof --model examples/ising-grid.json --samples "$tmp/g.csv" --test $t --bootstrap 1000
done
measure sample --model examples/ising-grid.json --method dmala --n 100 --iters 500 --out "$tmp/s.csv"
measure bnn train --arch cnn --method ste --ensemble 1 --epochs 1 --train-limit 12800 --out-dir "$tmp/ste"
measure bnn train --arch cnn --method gfsvgd --ensemble 5 --epochs 1 --train-limit 6400 --out-dir "$tmp/gf5"
