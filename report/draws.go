package report

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/npy"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model/categorical"
)

// Draws are chains of draws made by any tool: Values[(c·Length + t)·D + i]
// is variable i in draw t of chain c.
type Draws struct {
	Names          []string
	Chains, Length int
	D              int
	Values         []float64
}

// Value returns variable i of row r (chain by chain).
func (d *Draws) Value(i, r int) float64 { return d.Values[r*d.D+i] }

// SamplerColumns are the per-draw statistics that a draws CSV may hold
// before its variables, and that summary leaves out: dstein's and Stan's
// lp__ and the rest of CmdStan's sampler columns.
var SamplerColumns = []string{LogPColumn, "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"}

// drawsBytes is what reading draws of n values holds at its peak: the
// values, the parsed rows' keys and the samples and diagnostics that
// follow (about four times the values).
func drawsBytes(n float64) float64 { return 32 * n }

// ReadDraws reads draws from path: a CSV file with columns "chain" and
// "draw" (integers) and one column per variable (the per-draw statistics
// of SamplerColumns before the first variable's are left out), rows in any order; or an
// .npy array of shape (chain, draw, variable) of numbers or booleans, whose
// variables are named by the sidecar PATH.json that dstein writes beside
// its arrays when there is one (else z0, z1, …). Every chain must have the
// same number of draws. Reading stops with ctx's error when ctx is
// canceled, and is refused before it allocates when b's limit would not
// hold the draws.
func ReadDraws(ctx context.Context, path string, b memlimit.Budget) (*Draws, error) {
	if strings.HasSuffix(strings.ToLower(path), ".npy") {
		return readDrawsNPY(path, b)
	}
	if path != "-" {
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
			// A value takes at least two bytes (a digit and a comma).
			if err := b.Check("the draws of "+path, drawsBytes(float64(info.Size())/2)); err != nil {
				return nil, err
			}
		}
	}
	// Standard input has no size to check first: it is read up to the
	// size whose draws the budget holds (*safeio.TooLarge beyond).
	var max int64
	if b.Limit > 0 {
		max = int64(float64(b.Limit) / drawsBytes(0.5))
	}
	f, err := safeio.Open(path, "draws file", max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := readDrawsCSV(safeio.WithContext(ctx, f))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

func readDrawsCSV(r io.Reader) (*Draws, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file; want a header with chain, draw and the variables' columns")
	}
	if err != nil {
		return nil, csvError(err)
	}
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff") // a byte order mark
	}
	// The first chain and draw columns number the draws, and the columns
	// of per-draw statistics (dstein's lp__ and Stan's sampler columns,
	// SamplerColumns) are left out while no variable's column has come,
	// each once; every other column is a variable's, so that a network's
	// variable named chain, draw, x__ or even lp__ is read as one.
	chainCol, drawCol := -1, -1
	var cols []int
	var names []string
	stat := map[string]bool{}
	for k, h := range head {
		h = strings.TrimSpace(h)
		switch {
		case h == "chain" && chainCol < 0:
			chainCol = k
		case h == "draw" && drawCol < 0:
			drawCol = k
		case slices.Contains(SamplerColumns, h) && !stat[h] && len(cols) == 0:
			stat[h] = true
		default:
			cols = append(cols, k)
			names = append(names, h)
		}
	}
	if chainCol < 0 || drawCol < 0 {
		return nil, fmt.Errorf("the header %q lacks a chain or a draw column; want chain,draw,<variables> (dstein sample --draws writes that layout)", strings.Join(head, ","))
	}
	if len(cols) == 0 {
		return nil, errors.New("no variable columns beside chain and draw")
	}
	type key struct{ chain, draw int64 }
	var keys []key
	var vals []float64
	line := 1
	for {
		rec, err := cr.Read()
		line++
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvRowError(err, len(head), len(rec))
		}
		var k key
		for _, c := range []struct {
			col int
			dst *int64
		}{{chainCol, &k.chain}, {drawCol, &k.draw}} {
			v, err := strconv.ParseInt(strings.TrimSpace(rec[c.col]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s %q is not a whole number", line, head[c.col], rec[c.col])
			}
			*c.dst = v
		}
		keys = append(keys, k)
		for j, c := range cols {
			cell := strings.TrimSpace(rec[c])
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("line %d: variable %s is %q; want a finite number", line, names[j], rec[c])
			}
			// As the .npy reader: an integer beyond ±2⁵³ would merge with
			// its neighbours (9007199254740993 read as …992), and values
			// beyond 1e150 overflow the variances (the JSON then failed
			// on +Inf after the table was printed).
			if beyond53(cell, v) {
				return nil, fmt.Errorf("line %d: variable %s is %s, an integer beyond ±2⁵³, which a float64 cannot hold exactly", line, names[j], shortCell(cell))
			}
			if math.Abs(v) > categorical.MaxStateValue {
				return nil, fmt.Errorf("line %d: variable %s is %s; want at most %g in magnitude (larger values overflow the variances)", line, names[j], shortCell(cell), categorical.MaxStateValue)
			}
			vals = append(vals, v)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no draws below the header")
	}
	// Rows chain by chain (chains in increasing order), draws in order.
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := keys[order[a]], keys[order[b]]
		if ka.chain != kb.chain {
			return ka.chain < kb.chain
		}
		return ka.draw < kb.draw
	})
	counts := map[int64]int{}
	var chains []int64
	for k, o := range order {
		if k > 0 && keys[o] == keys[order[k-1]] {
			return nil, fmt.Errorf("chain %d has draw %d twice", keys[o].chain, keys[o].draw)
		}
		if counts[keys[o].chain] == 0 {
			chains = append(chains, keys[o].chain)
		}
		counts[keys[o].chain]++
	}
	length := counts[chains[0]]
	for _, c := range chains {
		if counts[c] != length {
			return nil, fmt.Errorf("chain %d has %d draws and chain %d has %d; every chain must have as many", chains[0], length, c, counts[c])
		}
	}
	d := &Draws{Names: names, Chains: len(chains), Length: length, D: len(names), Values: make([]float64, len(vals))}
	for r, o := range order {
		copy(d.Values[r*d.D:(r+1)*d.D], vals[o*d.D:(o+1)*d.D])
	}
	return d, nil
}

// readDrawsNPY reads an .npy array of shape (chain, draw, variable).
func readDrawsNPY(path string, b memlimit.Budget) (*Draws, error) {
	f, err := safeio.Open(path, "draws file", 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	info, err := npy.ReadHeader(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(info.Shape) != 3 || info.Shape[0] < 1 || info.Shape[1] < 1 || info.Shape[2] < 1 {
		return nil, fmt.Errorf("%s: an array of shape %v; want (chain, draw, variable), each at least 1", path, info.Shape)
	}
	if info.FortranOrder {
		return nil, fmt.Errorf("%s: a Fortran-ordered array; write it in C order (numpy's default, np.ascontiguousarray)", path)
	}
	n := float64(info.Shape[0]) * float64(info.Shape[1]) * float64(info.Shape[2])
	if err := b.Check("the draws of "+path, drawsBytes(n)); err != nil {
		return nil, err
	}
	read, size, err := npyReader(info.Descr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &Draws{Chains: info.Shape[0], Length: info.Shape[1], D: info.Shape[2], Values: make([]float64, int(n))}
	buf := make([]byte, size)
	for k := range d.Values {
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("%s: the data end after %d of %d values", path, k, len(d.Values))
		}
		v := read(buf)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			what := fmt.Sprint(v)
			if math.IsNaN(v) && strings.ContainsAny(info.Descr[1:2], "iu") {
				what = "an integer beyond ±2⁵³, which a float64 cannot hold exactly"
			}
			return nil, fmt.Errorf("%s: value %d (chain %d, draw %d, variable %d) is %s; want a finite number", path, k, k/(d.Length*d.D)+1, k/d.D%d.Length+1, k%d.D+1, what)
		}
		d.Values[k] = v
	}
	d.Names = make([]string, d.D)
	for i := range d.Names {
		d.Names[i] = "z" + strconv.Itoa(i)
	}
	// dstein's sidecar names the variables; one that describes another
	// array (a file replaced or edited since) is an error, not a silent
	// fallback to z0, z1, …. A JSON file there that is not dstein's
	// sidecar is not ours to read.
	side := SidecarPath(path)
	if raw, err := os.ReadFile(side); err == nil {
		var sc struct {
			Format    string   `json:"format"`
			Dims      []string `json:"dims"`
			Variables []string `json:"variables"`
		}
		if json.Unmarshal(raw, &sc) == nil && sc.Format == SidecarFormat {
			dims := strings.Join(sc.Dims, ",")
			switch {
			case dims != "chain,draw,variable":
				return nil, fmt.Errorf("%s: its sidecar %s describes an array of dimensions (%s), not (chain, draw, variable): give draws of chains (dstein sample --draws --format npy)", path, side, dims)
			case len(sc.Variables) != d.D:
				return nil, fmt.Errorf("%s: its sidecar %s names %d variables, the array has %d: one of the two was replaced or edited since dstein wrote them", path, side, len(sc.Variables), d.D)
			}
			copy(d.Names, sc.Variables)
		}
	}
	return d, nil
}

// SidecarPath returns the path of the JSON sidecar of the NumPy array at
// path (FILE.npy → FILE.json).
func SidecarPath(path string) string {
	if ext := filepath.Ext(path); strings.EqualFold(ext, ".npy") {
		path = path[:len(path)-len(ext)]
	}
	return path + ".json"
}

// npyReader returns the decoder of one value of a NumPy type of either
// byte order (floats of 16, 32 and 64 bits, integers signed or not of 8
// to 64 bits, bool), and its size. An integer beyond ±2⁵³ decodes to NaN:
// float64 cannot hold it exactly, and two such states could become one.
func npyReader(descr string) (func([]byte) float64, int, error) {
	bad := fmt.Errorf("values of NumPy type %q; want a float (16, 32 or 64 bits), a signed or unsigned integer (8 to 64 bits) or bool", descr)
	if len(descr) != 3 {
		return nil, 0, bad
	}
	var order binary.ByteOrder
	switch descr[0] {
	case '<', '|':
		order = binary.LittleEndian
	case '>':
		order = binary.BigEndian
	case '=':
		order = binary.NativeEndian
	default:
		return nil, 0, bad
	}
	const exact = 1 << 53
	switch descr[1:] {
	case "f8":
		return func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) }, 8, nil
	case "f4":
		return func(b []byte) float64 { return float64(math.Float32frombits(order.Uint32(b))) }, 4, nil
	case "f2":
		return func(b []byte) float64 { return halfFloat(order.Uint16(b)) }, 2, nil
	case "i8":
		return func(b []byte) float64 {
			if v := int64(order.Uint64(b)); -exact <= v && v <= exact {
				return float64(v)
			}
			return math.NaN()
		}, 8, nil
	case "u8":
		return func(b []byte) float64 {
			if v := order.Uint64(b); v <= exact {
				return float64(v)
			}
			return math.NaN()
		}, 8, nil
	case "i4":
		return func(b []byte) float64 { return float64(int32(order.Uint32(b))) }, 4, nil
	case "u4":
		return func(b []byte) float64 { return float64(order.Uint32(b)) }, 4, nil
	case "i2":
		return func(b []byte) float64 { return float64(int16(order.Uint16(b))) }, 2, nil
	case "u2":
		return func(b []byte) float64 { return float64(order.Uint16(b)) }, 2, nil
	case "i1":
		return func(b []byte) float64 { return float64(int8(b[0])) }, 1, nil
	case "u1", "b1":
		return func(b []byte) float64 { return float64(b[0]) }, 1, nil
	}
	return nil, 0, bad
}

// halfFloat returns the IEEE 754 half-precision number of bits h.
func halfFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24) // subnormal
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// beyond53 reports whether a cell written as an integer lies beyond ±2⁵³,
// where float64 v no longer tells it from its neighbours.
func beyond53(cell string, v float64) bool {
	if math.Abs(v) < 1<<53 || strings.ContainsAny(cell, ".eE") {
		return false
	}
	i, err := strconv.ParseInt(cell, 10, 64)
	return err != nil || i > 1<<53 || i < -(1<<53)
}
