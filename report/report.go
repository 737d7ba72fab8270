package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// FormatValue formats a state value or statistic: the shortest
// representation that reads back as the same float64 ("-1", "0.5").
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteSamplesCSV writes a header z0,z1,… and one row per sample with the
// state values as the model lists them.
func WriteSamplesCSV(w *bufio.Writer, m model.Model, s *sampler.Samples) error {
	return WriteGroupedSamplesCSV(w, m, s, Groups{}, nil)
}

// LogPColumn is the name of the column (and of the sidecar's key) that
// holds each sample's log p*, Stan's and ArviZ's name for it.
const LogPColumn = "lp__"

// LogProbs returns log p*(z) of each of the samples' rows under m: the
// unnormalised log density that the run summary's log_p row averages.
func LogProbs(m model.Model, s *sampler.Samples) []float64 {
	lp := make([]float64, s.N)
	for r := range s.N {
		lp[r] = m.LogProb(s.Row(r))
	}
	return lp
}

// Groups name how the rows of samples are grouped, for the leading
// columns of a samples CSV: row r is number r%Length+1 of group
// r/Length+1. The zero value writes no such columns.
type Groups struct {
	// Group and Member name the two columns: "chain" and "draw" for MCMC
	// draws, "replicate" and "particle" for replicates.
	Group, Member string
	Length        int
}

// IDColumns are the leading columns a samples CSV may have before
// z0,z1,…: the group and member numbers that WriteGroupedSamplesCSV writes.
var IDColumns = []string{"chain", "draw", "replicate", "particle"}

// WriteGroupedSamplesCSV writes the samples like WriteSamplesCSV, after
// two columns that number each row's group and its place in the group
// (from 1) when g is not the zero value, and after a column lp__ of each
// row's log p* when lp is not nil (one value per row, LogProbs).
func WriteGroupedSamplesCSV(w *bufio.Writer, m model.Model, s *sampler.Samples, g Groups, lp []float64) error {
	if lp != nil && len(lp) != s.N {
		return fmt.Errorf("%d log p* values for %d samples", len(lp), s.N)
	}
	ids := g.Length > 0
	if ids {
		w.WriteString(g.Group + "," + g.Member + ",")
	}
	if lp != nil {
		w.WriteString(LogPColumn + ",")
	}
	for i := range s.D {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(model.VariableName(m, i))
	}
	w.WriteByte('\n')
	buf := make([]byte, 0, 32)
	for r := range s.N {
		if ids {
			buf = strconv.AppendInt(buf[:0], int64(r/g.Length+1), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(r%g.Length+1), 10)
			buf = append(buf, ',')
			w.Write(buf)
		}
		if lp != nil {
			buf = strconv.AppendFloat(buf[:0], lp[r], 'g', -1, 64)
			buf = append(buf, ',')
			w.Write(buf)
		}
		for i, st := range s.Row(r) {
			if i > 0 {
				w.WriteByte(',')
			}
			buf = strconv.AppendFloat(buf[:0], m.States(i)[st], 'g', -1, 64)
			w.Write(buf)
		}
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w *bufio.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
