package ensemble

import (
	"bytes"
	"context"
	"encoding/gob"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dstein/dstein/bnn"
	"github.com/dstein/dstein/memlimit"
)

// allocated returns the bytes that f allocates (garbage included).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// fuzzBudget is the memory budget FuzzLoadTrained gives LoadTrainedWithin
// (bnn export's --max-memory).
const fuzzBudget = 64 << 20

// checkpointAllocBound is the most that reading a checkpoint of n bytes
// may allocate, garbage included, with LoadTrainedWithin or
// readCheckpoint, whatever its settings and length prefixes claim:
//   - gob's buffer of the message, a byte a byte, read twice by
//     LoadTrainedWithin, and one array allocated ahead of the data that a
//     length prefix claims, per decoding (at most gobChunk each);
//   - the values decoded, per byte of the file: at most an EpochLog (88
//     bytes) for an empty element of History, a State (72) of Members, an
//     adamState (48) of Adam's inner arrays, a slice header (24) or a
//     float64; and gob's own 80 bytes for each array it skips (Adam's
//     inner arrays, in both of LoadTrainedWithin's decodings). gob sizes
//     a slice from its count up to gobChunk and appends beyond it, so an
//     array past 10 MB costs about 5 times its size while it grows (the
//     arrays it outgrew, at Go's growth of 1.25): 5 × 88 = 440 bytes a
//     byte at most;
//   - the networks that the settings describe, built only when the file
//     can hold their states (minCheckpointBytes: a byte a value), 16
//     bytes a value (NetBytes), and the digest's copy and encoding of
//     each, 8 bytes a parameter and 16 a running statistic;
//   - fixed costs: gob's type descriptions and decoding engines, the
//     readers' buffers, an error's message (about 25 kB).
//
// Measured: the real checkpoint (one trained cnn, 1.9 MB) costs 3.4
// bytes a byte in LoadTrainedWithin and 1.7 in readCheckpoint; the zero
// cnn seed (110 kB) 26 in LoadTrainedWithin (its networks); a length
// prefix claiming 2³⁰ elements 10.5 MB; crafted files of a million empty
// elements (1 MB) at most 450 bytes a byte (History, readCheckpoint), 353
// (Members, both) and 164 (Adam, LoadTrainedWithin). So 512 a byte, two
// chunks and 1 MiB. Networks sized from settings alone (a cnn, 1.7 MB,
// or 64 AlexNets, 38 GB without a budget, from a file of 900 bytes) are
// caught by it only beyond 22 MB: the seeds that claim them are checked
// by TestCheckpointSettingsClaims.
func checkpointAllocBound(n int) uint64 { return 512*uint64(n) + 2*gobChunk + 1<<20 }

// encodeCheckpoint is the gob encoding of cp, as save writes it.
func encodeCheckpoint(t testing.TB, cp any) []byte {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(cp); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gobUint is gob's encoding of an unsigned integer.
func gobUint(u uint64) []byte {
	if u < 128 {
		return []byte{byte(u)}
	}
	n := (bits.Len64(u) + 7) / 8
	out := []byte{byte(-n)}
	for i := n - 1; i >= 0; i-- {
		out = append(out, byte(u>>(8*i)))
	}
	return out
}

// gobFloat is gob's encoding of a float.
func gobFloat(f float64) []byte { return gobUint(bits.ReverseBytes64(math.Float64bits(f))) }

// withCount returns the gob stream b whose last message (the value) has
// the first slice of one element holding marker claiming count elements
// instead, its message's length prefix adjusted. It returns nil when
// marker is not found.
func withCount(b []byte, marker float64, count uint64) []byte {
	// The messages: a length, then that many bytes.
	var msgs [][]byte
	for r := b; len(r) > 0; {
		var n uint64
		if r[0] < 128 {
			n, r = uint64(r[0]), r[1:]
		} else {
			k := int(-int8(r[0]))
			for _, c := range r[1 : 1+k] {
				n = n<<8 | uint64(c)
			}
			r = r[1+k:]
		}
		msgs, r = append(msgs, r[:n]), r[n:]
	}
	last := msgs[len(msgs)-1]
	at := bytes.Index(last, append([]byte{1}, gobFloat(marker)...))
	if at < 0 {
		return nil
	}
	var patched []byte
	patched = append(patched, last[:at]...)
	patched = append(patched, gobUint(count)...)
	patched = append(patched, last[at+1:]...)
	var out []byte
	for _, m := range msgs[:len(msgs)-1] {
		out = append(append(out, gobUint(uint64(len(m)))...), m...)
	}
	return append(append(out, gobUint(uint64(len(patched)))...), patched...)
}

// zeroState is the state of a new network of arch on MNIST with its
// parameters at zero, the smallest encoding of a network (a byte a
// value).
func zeroState(t testing.TB, arch string) bnn.State {
	n, err := bnn.New(arch, bnn.Shape{H: 28, W: 28, C: 1}, 10)
	if err != nil {
		t.Fatal(err)
	}
	st := n.State()
	for _, p := range st.Params {
		clear(p)
	}
	return st
}

// FuzzLoadTrained feeds a checkpoint file to LoadTrainedWithin (the
// two-pass decoding of bnn export, under a budget of fuzzBudget) and to
// readCheckpoint (bnn train --resume): neither may panic or allocate more
// than checkpointAllocBound, errors must be one line, and the networks
// LoadTrainedWithin returns must be those its settings describe, with the
// digest of their weights, and the states that readCheckpoint decodes
// from the same file.
func FuzzLoadTrained(f *testing.F) {
	// A real checkpoint: one cnn trained for a step of 16 MNIST-sized
	// images (1.9 MB, Adam's moments included).
	dir := f.TempDir()
	trainedDir := filepath.Join(dir, "trained")
	if err := os.Mkdir(trainedDir, 0o700); err != nil {
		f.Fatal(err)
	}
	cfg := Config{Data: "mnist", Arch: "cnn", Method: "benn", Ensemble: 1, Epochs: 1, Batch: 16, Seed: 5}
	if _, err := Train(context.Background(), cfg, mnistLike(16), mnistLike(4), Options{Dir: trainedDir}); err != nil {
		f.Fatal(err)
	}
	trained, err := os.ReadFile(filepath.Join(trainedDir, CheckpointName))
	if err != nil {
		f.Fatal(err)
	}
	fuzzDir := filepath.Join(dir, "fuzz")
	if err := os.Mkdir(fuzzDir, 0o700); err != nil {
		f.Fatal(err)
	}
	// The real checkpoint is checked here, not fuzzed: mutating and
	// minimizing inputs of 1.9 MB would take most of the fuzzing time.
	// Its beginning (gob's descriptions of the types, the settings, the
	// first arrays) is fuzzed.
	if err := checkCheckpoint(f, fuzzDir, trained); err != nil {
		f.Fatal(err)
	}
	f.Add(trained[:1<<10])
	f.Add(trained[:8<<10])
	// The smallest valid checkpoint: one cnn whose parameters are zero,
	// without Adam's moments (110 kB); truncated in the type
	// descriptions, in the settings, in the networks and a byte short;
	// and with a byte changed in the settings and in the networks.
	small := checkpoint{Version: checkpointVersion, Config: cfg, Units: 1, Members: []bnn.State{zeroState(f, "cnn")}, Alphas: []float64{0.5}, History: []EpochLog{{Member: 0, Epoch: 1, TrainLoss: 2.3}}}
	zero := encodeCheckpoint(f, &small)
	if err := checkCheckpoint(f, fuzzDir, zero); err != nil {
		f.Fatal(err)
	}
	f.Add(zero)
	for _, n := range []int{0, 1, 10, 100, 400, 1000, len(zero) / 2, len(zero) - 1} {
		f.Add(zero[:n])
	}
	bad := bytes.Clone(zero)
	bad[bytes.Index(bad, []byte("mnist"))] ^= 0x20 // "Mnist"
	f.Add(bad)
	bad = bytes.Clone(zero)
	bad[len(bad)/2] ^= 0x40
	f.Add(bad)
	// Gob messages that claim 2³⁰ − 1 and 2⁶² bytes in a few.
	f.Add([]byte{0xfc, 0x3f, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Add([]byte{0xf8, 0x40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3})
	// Arrays whose length prefixes claim 2²⁰, 2²⁶, 2³⁰ and 2⁶² elements
	// but hold one: a parameter array, the boosting coefficients.
	const marker = 12345.5
	claim := checkpoint{Version: checkpointVersion, Config: Config{Data: "mnist", Arch: "cnn", Method: "benn", Ensemble: 1, Epochs: 1},
		Members: []bnn.State{{Params: [][]float32{{marker}}}}}
	params := encodeCheckpoint(f, &claim)
	claim.Members, claim.Alphas = nil, []float64{marker}
	alphas := encodeCheckpoint(f, &claim)
	for _, c := range []uint64{1 << 20, 1 << 26, 1 << 30, 1 << 62} {
		for _, b := range [][]byte{params, alphas} {
			if p := withCount(b, marker, c); p != nil {
				f.Add(p)
			} else {
				f.Fatal("marker not found")
			}
		}
	}
	// Valid settings that describe more than the file holds: 64 AlexNets
	// on CIFAR-10 (38 GB, over any budget), 64 MLPs (275 MB, over the
	// fuzzing budget), 3 MLPs and one cnn (13 and 1.7 MB, within it), all
	// in a few hundred bytes; and absurd or invalid settings.
	for _, c := range []checkpoint{
		{Version: 2, Config: Config{Data: "cifar10", Arch: "alexnet", Method: "gfsvgd", Ensemble: 64, Epochs: 4096}, Units: 4096},
		{Version: 2, Config: Config{Data: "mnist", Arch: "mlp", Method: "bagging", Ensemble: 64, Epochs: 1}, Units: 64},
		{Version: 2, Config: Config{Data: "fashion", Arch: "mlp", Method: "ste", Ensemble: 3, Epochs: 1}, Units: 3},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Ensemble: 1, Epochs: 1}, Members: []bnn.State{{}}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Ensemble: 1, Epochs: 1}, Units: -1},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Ensemble: 1, Epochs: 1}, Units: math.MaxInt},
		{Version: math.MaxInt, Config: cfg},
		{Version: -1, Config: cfg, Units: 1, Members: small.Members},
		{Version: 2, Config: Config{Data: "imagenet", Arch: "cnn", Ensemble: 1}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "resnet", Ensemble: 1}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Ensemble: 65}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Ensemble: math.MinInt}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Epochs: math.MaxInt, Ensemble: 64, Method: "benn"}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Batch: 1}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", LearningRate: math.NaN(), Temperature: math.Inf(1)}},
		{Version: 2, Config: Config{Data: "mnist", Arch: "cnn", Method: "adaboost", Bandwidth: "fixed"}},
		// The networks of an mlp where the settings say cnn, and two
		// where they say one.
		{Version: 2, Config: cfg, Units: 1, Members: []bnn.State{zeroState(f, "mlp")}},
		{Version: 2, Config: cfg, Units: 1, Members: []bnn.State{small.Members[0], small.Members[0]}},
	} {
		f.Add(encodeCheckpoint(f, &c))
	}
	// Members and Adam's moments of many empty states, the most a byte of
	// the file can make gob allocate.
	f.Add(encodeCheckpoint(f, &checkpoint{Version: 2, Config: cfg, Members: make([]bnn.State, 1000), Adam: make([][]adamState, 1000)}))
	f.Add(encodeCheckpoint(f, &checkpoint{Version: 2, Config: cfg, Adam: [][]adamState{make([]adamState, 1000)}}))
	f.Add(encodeCheckpoint(f, &checkpoint{Version: 2, Config: cfg, History: make([]EpochLog, 1000)}))

	f.Fuzz(func(t *testing.T, data []byte) { checkCheckpoint(t, fuzzDir, data) })
}

// checkCheckpoint writes data as the checkpoint of dir and reads it with
// LoadTrainedWithin and readCheckpoint, checking what FuzzLoadTrained
// says; it returns LoadTrainedWithin's error.
func checkCheckpoint(t testing.TB, dir string, data []byte) error {
	t.Helper()
	path := filepath.Join(dir, CheckpointName)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	bound := checkpointAllocBound(len(data))
	var tr *Trained
	var err error
	if n := allocated(func() { tr, err = LoadTrainedWithin(path, memlimit.Budget{Limit: fuzzBudget}, "reading", 0) }); n > bound {
		t.Fatalf("LoadTrainedWithin of %d bytes allocated %d bytes; want at most %d", len(data), n, bound)
	}
	var cp checkpoint
	var cerr error
	if n := allocated(func() { cp, cerr = readCheckpoint(dir, 0) }); n > bound {
		t.Fatalf("readCheckpoint of %d bytes allocated %d bytes; want at most %d", len(data), n, bound)
	}
	for _, e := range []error{err, cerr} {
		if e != nil && strings.Contains(e.Error(), "\n") {
			t.Fatalf("error spans lines: %q", e)
		}
	}
	if err != nil {
		return err
	}
	c := tr.Config
	if c.Validate() != nil || len(tr.Nets) != c.Ensemble || tr.Units < 0 || tr.Units > tr.TotalUnits || (c.Method == "benn") != (tr.Alphas != nil) {
		t.Fatalf("loaded %d networks, %d of %d units, %d coefficients, of settings %+v", len(tr.Nets), tr.Units, tr.TotalUnits, len(tr.Alphas), c)
	}
	if d := digest(tr.Nets); d != tr.WeightsSHA256 {
		t.Fatalf("digest %s, the networks' is %s", tr.WeightsSHA256, d)
	}
	if cerr != nil {
		// readCheckpoint decodes what LoadTrainedWithin skips (Adam's
		// moments, the logs), which may be damaged.
		return nil
	}
	if len(cp.Members) != len(tr.Nets) {
		t.Fatalf("readCheckpoint decoded %d networks, LoadTrainedWithin %d", len(cp.Members), len(tr.Nets))
	}
	for k, n := range tr.Nets {
		if !sameState(n.State(), cp.Members[k]) {
			t.Fatalf("network %d: LoadTrainedWithin's state differs from readCheckpoint's", k+1)
		}
	}
	return nil
}

// sameState reports whether two states hold the same values, bit for bit.
func sameState(a, b bnn.State) bool {
	if len(a.Params) != len(b.Params) || len(a.Mean) != len(b.Mean) || len(a.Var) != len(b.Var) {
		return false
	}
	for i := range a.Params {
		if len(a.Params[i]) != len(b.Params[i]) {
			return false
		}
		for j, v := range a.Params[i] {
			if math.Float32bits(v) != math.Float32bits(b.Params[i][j]) {
				return false
			}
		}
	}
	same64 := func(x, y [][]float64) bool {
		for i := range x {
			if len(x[i]) != len(y[i]) {
				return false
			}
			for j, v := range x[i] {
				if math.Float64bits(v) != math.Float64bits(y[i][j]) {
					return false
				}
			}
		}
		return true
	}
	return same64(a.Mean, b.Mean) && same64(a.Var, b.Var)
}
