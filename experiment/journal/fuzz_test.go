package journal

import (
	"math"
	"runtime"
	"strings"
	"testing"
)

// FuzzJournal feeds arbitrary bytes to the journal reader (the first
// round's comment header included), with and without checksums: it must
// return an error or trials, never panic; every trial it accepts has a
// whole index ≥ 0, a finite x and finite metrics within their ranges; the
// kept prefix ends at a line end.
func FuzzJournal(f *testing.F) {
	for _, s := range []string{
		"method,x,trial,metric,value\ngibbs,10,0,mse,0.1\ngibbs,10,0,_done,1\n",
		"method,x,trial,metric,value\r\ngibbs,10,0,mse,0.1\r\ngibbs,10,0,_done,1\r\n",
		"# dstein experiment ising-n seed=1 mode=full field=0\nmethod,x,trial,metric,value\ngibbs,10,0,mse,0.1\ngibbs,10,0,_done,1\ngibbs,20,0,ms",
		"method,x,trial,metric,value\ngibbs,10,0,mse,NaN\n",
		"method,x,trial,metric,value\n\"a,b\",1,0,mse,0.1\n\"a,b\",1,0,_done,1\n",
		"method,x,trial,metric,value\ngibbs,10,0,_done,1\ngibbs,10,0,_done,1\n",
		"method,x,trial,metric,value\ngibbs,10,0,mse,0.1\ngibbs,10,0,_done,2609464593\n",
		"method,x,trial,metric,value\ngibbs,10,0,mse,0.1\ngibbs,10,0,_done,99999999999999999999\n",
		"method,x,trial,metric,value\ngibbs,10,0,mse,0.1\ngibbs,10,1,mse,0.2\ngibbs,10,0,_done,2609464593\n",
	} {
		f.Add([]byte(s))
	}
	// Deep and huge inputs: long fields, huge numbers, many rows.
	f.Add([]byte("method,x,trial,metric,value\n" + strings.Repeat("[", 100000) + ",1e999,9223372036854775807,m,1e308\n"))
	f.Add([]byte("method,x,trial,metric,value\n" + strings.Repeat("a,0,1073741823,mse,-0\n", 5000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		want := Settings{Experiment: "ising-n", Seed: 1, Mode: "full", Options: map[string]float64{"field": 0}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		body, _, err := legacyHeader(data, &want, map[string]bool{"nmax": true})
		if err != nil {
			return
		}
		for _, sums := range []bool{false, true} {
			checkRead(t, body, sums)
		}
		// The reader's memory grows with the rows (maps of the trials'
		// metrics); both reads together stay under 64 bytes per byte of
		// input plus 1 MiB (BytesPerByte, 16, bounds one read's
		// peak; this counts garbage too).
		runtime.ReadMemStats(&after)
		if got, bound := after.TotalAlloc-before.TotalAlloc, 64*uint64(len(data))+1<<20; got > bound {
			t.Fatalf("reading %d bytes allocated %d bytes, over %d", len(data), got, bound)
		}
	})
}

// checkRead reads body as a journal with or without checksums and checks
// what it accepts.
func checkRead(t *testing.T, body []byte, sums bool) {
	t.Helper()
	{
		j := &Journal{done: map[Key]map[string]float64{}, checksums: sums}
		keep, _, err := j.read(body)
		if err != nil {
			return
		}
		if keep > len(body) || (keep > 0 && body[keep-1] != '\n') {
			t.Fatalf("kept %d of %d bytes, not at a line end", keep, len(body))
		}
		if len(j.order) != len(j.done) {
			t.Fatalf("%d trials in order, %d done", len(j.order), len(j.done))
		}
		for k, vals := range j.done {
			if k.Trial < 0 || math.IsNaN(k.X) || math.IsInf(k.X, 0) || k.Method == "" {
				t.Fatalf("accepted key %+v", k)
			}
			for m, v := range vals {
				if math.IsNaN(v) || math.IsInf(v, 0) || checkMetric(m, v) != nil {
					t.Fatalf("accepted %s = %v", m, v)
				}
			}
		}
	}
}
