package bif_test

import (
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/bif"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/uai"
)

// publicNetworks are bnlearn's networks shipped under testdata (source and
// licence in testdata/README.md), each with three files written by
// testdata/make_reference.py, which shares no code with dstein: a UAI file
// of the same network, an XMLBIF file with the variables in another order
// and every table's parents reversed, and the exact marginals by
// numpy.einsum (NAME.uai.MAR).
var publicNetworks = []struct {
	name      string
	variables int
}{{"sachs", 11}, {"child", 20}, {"insurance", 27}, {"alarm", 37}}

func readWith(t *testing.T, path string, read func(io.Reader) (*factorgraph.Graph, *bif.Network, error)) (*factorgraph.Graph, *bif.Network) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, net, err := read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g, net
}

func marginalsOf(t *testing.T, g *factorgraph.Graph) ([][]float64, float64) {
	t.Helper()
	ve, err := exact.ForFactorGraph(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := ve.Result()
	return r.Marginals, r.LogZ
}

// Exact marginals of each public network by variable elimination agree to
// 1e-10 whether the network is read from BIF, from XMLBIF or from the
// independent UAI file, and with numpy's contraction; log Z is 0 (the
// tables are conditional distributions). The 1e-10 is far above the
// rounding of either computation (about 1e-15 per table entry times the
// number of terms summed) and far below any error in a table's layout.
func TestPublicNetworksAgreeAcrossFormats(t *testing.T) {
	for _, c := range publicNetworks {
		stem := "testdata/" + c.name
		g, net := readWith(t, stem+".bif", bif.Read)
		xg, xnet := readWith(t, stem+".xml", bif.ReadXML)
		u, err := os.Open(stem + ".uai")
		if err != nil {
			t.Fatal(err)
		}
		ug, err := uai.Read(u)
		u.Close()
		if err != nil {
			t.Fatal(err)
		}
		want, err := uai.ReadMARFile(stem + ".uai.MAR")
		if err != nil {
			t.Fatal(err)
		}
		if len(net.Variables) != c.variables || len(xnet.Variables) != c.variables || ug.Dim() != c.variables || len(want) != c.variables {
			t.Fatalf("%s: %d, %d, %d variables and %d marginals; want %d", c.name, len(net.Variables), len(xnet.Variables), ug.Dim(), len(want), c.variables)
		}
		bm, bz := marginalsOf(t, g)
		xm, xz := marginalsOf(t, xg)
		um, uz := marginalsOf(t, ug)
		for _, z := range []float64{bz, xz, uz} {
			if math.Abs(z) > 1e-10 {
				t.Errorf("%s: log Z %v (BIF), %v (XMLBIF), %v (UAI); want 0", c.name, bz, xz, uz)
				break
			}
		}
		var worst float64
		xindex := map[string]int{}
		for i, v := range xnet.Variables {
			xindex[v] = i
		}
		for i, v := range net.Variables {
			j, ok := xindex[v]
			if !ok {
				t.Fatalf("%s: variable %q is not in the XMLBIF file", c.name, v)
			}
			if strings.Join(xnet.States[j], ",") != strings.Join(net.States[i], ",") {
				t.Errorf("%s: %s's states %v in XMLBIF, %v in BIF", c.name, v, xnet.States[j], net.States[i])
			}
			for s := range net.States[i] {
				for _, o := range []struct {
					what string
					p    float64
				}{{"XMLBIF", xm[j][s]}, {"UAI", um[i][s]}, {"numpy", want[i][s]}} {
					d := math.Abs(bm[i][s] - o.p)
					worst = max(worst, d)
					if d > 1e-10 {
						t.Errorf("%s: P(%s = %s) = %v from BIF, %v from %s", c.name, v, net.States[i][s], bm[i][s], o.p, o.what)
					}
				}
			}
		}
		t.Logf("%s: %d variables, largest difference between the BIF's marginals and the XMLBIF's, the UAI file's or numpy's %.2g", c.name, c.variables, worst)
	}
}

func TestReadXMLErrors(t *testing.T) {
	vars := `<VARIABLE TYPE="nature"><NAME>a</NAME><OUTCOME>x</OUTCOME><OUTCOME>y</OUTCOME></VARIABLE>
<VARIABLE TYPE="nature"><NAME>b</NAME><OUTCOME>x</OUTCOME><OUTCOME>y</OUTCOME></VARIABLE>
`
	defA := "<DEFINITION><FOR>a</FOR><TABLE>0.5 0.5</TABLE></DEFINITION>\n"
	doc := func(body string) string {
		return "<BIF VERSION=\"0.3\"><NETWORK><NAME>n</NAME>\n" + body + "</NETWORK></BIF>"
	}
	for _, c := range []struct{ src, want string }{
		{doc(vars + defA + "<DEFINITION><FOR>b</FOR><GIVEN>a</GIVEN><TABLE>0.5 0.5 0.5</TABLE></DEFINITION>"), "has 3 numbers; want 4"},
		{doc(vars + defA + "<DEFINITION><FOR>b</FOR><GIVEN>a</GIVEN><TABLE>0.5 0.5 0.5 0.6</TABLE></DEFINITION>"), "sums to 1.1"},
		{doc(vars + defA + "<DEFINITION><FOR>b</FOR><GIVEN>c</GIVEN><TABLE>1 0</TABLE></DEFINITION>"), `<GIVEN> "c" is not a variable`},
		{doc(vars + defA), `"b" has no <DEFINITION>`},
		{doc(vars + defA + defA), `a second definition for "a"`},
		{doc(vars + "<DEFINITION><FOR>a</FOR><GIVEN>b</GIVEN><TABLE>1 0 1 0</TABLE></DEFINITION><DEFINITION><FOR>b</FOR><GIVEN>a</GIVEN><TABLE>1 0 1 0</TABLE></DEFINITION>"), "cycle, a ← b ← a"},
		{doc(vars + defA + "<DEFINITION><FOR>b</FOR><GIVEN>b</GIVEN><TABLE>1 0 1 0</TABLE></DEFINITION>"), "among its own parents"},
		{doc(vars + defA + "<DEFINITION><FOR>b</FOR><TABLE>0.5 x</TABLE></DEFINITION>"), `"x" in the table of "b"`},
		{doc(`<VARIABLE TYPE="decision"><NAME>a</NAME><OUTCOME>x</OUTCOME></VARIABLE>`), `TYPE "decision"`},
		{doc(`<VARIABLE><NAME>a</NAME><OUTCOME>x</OUTCOME><OUTCOME>x</OUTCOME></VARIABLE>`), `repeated outcome "x"`},
		{doc(vars + "<DEFINITION><FOR>a</FOR><TABLE>0.5 0.5</TABLE>"), "not well-formed XML"},
		{"<network/>", "starts with <BIF>"},
		{"", "no <BIF><NETWORK>"},
		{doc(""), "defines no variable"},
		{doc(vars+defA+"<DEFINITION><FOR>b</FOR><TABLE>0.5 0.5</TABLE></DEFINITION>") + "\n\ntrailing garbage", "line 7: content after </BIF>"},
		{doc(vars+defA+"<DEFINITION><FOR>b</FOR><TABLE>0.5 0.5</TABLE></DEFINITION>") + "<BIF/>", "content after </BIF>"},
	} {
		_, _, err := bif.ReadXML(strings.NewReader(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v; want one with %q", c.src, err, c.want)
		}
	}
	// PROBABILITY for DEFINITION, commas between numbers, properties and
	// a comment; P(b = x) = 0.25·1 + 0.75·0.5.
	ok := doc(`<!-- c --><PROPERTY>p</PROPERTY>` + vars + `<PROBABILITY><FOR>a</FOR><TABLE>0.25, 0.75</TABLE></PROBABILITY>
<DEFINITION><FOR>b</FOR><GIVEN>a</GIVEN><TABLE>1 0
0.5 0.5</TABLE><PROPERTY>q</PROPERTY></DEFINITION>`)
	g, net, err := bif.ReadXML(strings.NewReader(ok + "\n<!-- white space and comments may follow -->\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := marginalsOf(t, g)
	if net.Name != "n" || math.Abs(m[1][0]-0.625) > 1e-12 {
		t.Errorf("network %q, P(b = x) = %v; want n and 0.625", net.Name, m[1][0])
	}
}
