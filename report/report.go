package report

import (
	"bufio"
	"encoding/json"
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
	for i := range s.D {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("z")
		w.WriteString(strconv.Itoa(i))
	}
	w.WriteByte('\n')
	buf := make([]byte, 0, 32)
	for r := range s.N {
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
