package experiment

import "strings"

// DISCS's published results (google-research/discs): the last line of each
// run's results.csv beside its config.yaml, at the commit below, folders
// discs/common/discs-ising-sampler_sweep_56214850/<run>/ and
// discs/common/discs-categorical-sampler_sweep_56324581/<run>/ (100 chains,
// 100,000 steps, the first half burn-in; the files were deleted from the
// repository later). Columns: ESS is the mean over chains of tfp's
// per-chain ESS of the Hamming distance (L1 distance of the codes for
// more than two states) to one random state; ESS_M-H = ESS / 50,000 steps;
// ESS_T = ESS / the seconds of the kept steps (all chains at once, on
// DISCS's accelerator); ESS_EE = ESS / (evaluations per chain in the kept
// half). The Ising model of that commit counted each edge twice.

const (
	discsRepo   = "github.com/google-research/discs"
	discsCommit = "5bb441c905aa34d05d494d0086588d9b94c2d9fd"
)

// discsResult is one published run.
type discsResult struct {
	target, sampler, balance, solver string
	ess, essPerStep, essPerSecond    float64
	essPerEval, seconds              float64
	run                              string // the run's folder
}

var discsPublished = []discsResult{
	{"categorical-q4", "blockgibbs", "", "", 50.865623, 0.0010173124, 0.2223091, 6.3582025e-05, 228.8058693408966, "3_sampler_config.name='blockgibbs',model_config.init_sigma=1.5,model_config.num_categories=4"},
	{"categorical-q4", "dlmc", "ratio", "euler_forward", 9444.256, 0.18888511, 1020.61096, 0.047221277, 9.253531694412231, "24_sampler_config.name='dlmc',sampler_config.solver='euler_forward',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q4", "dlmc", "ratio", "interpolate", 49585.95, 0.99171895, 4939.9556, 0.24792974, 10.037730693817139, "20_sampler_config.name='dlmc',sampler_config.solver='interpolate',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q4", "dlmc", "sqrt", "euler_forward", 4170.4414, 0.083408825, 453.20297, 0.020852206, 9.202149629592896, "23_sampler_config.name='dlmc',sampler_config.solver='euler_forward',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q4", "dlmc", "sqrt", "interpolate", 49585.95, 0.99171895, 4963.57, 0.24792974, 9.98997688293457, "19_sampler_config.name='dlmc',sampler_config.solver='interpolate',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q4", "dmala", "ratio", "", 2095.3752, 0.041907504, 230.48553, 0.010476876, 9.091135740280151, "8_sampler_config.name='dmala',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q4", "dmala", "sqrt", "", 1380.8706, 0.027617412, 155.48027, 0.006904353, 8.88132381439209, "7_sampler_config.name='dmala',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q4", "gwg", "ratio", "", 18.965681, 0.0003793136, 2.079858, 9.48284e-05, 9.118737936019897, "16_sampler_config.name='gwg',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q4", "gwg", "sqrt", "", 17.04459, 0.0003408918, 1.8976685, 8.522295e-05, 8.981858015060425, "15_sampler_config.name='gwg',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q4", "hammingball", "", "", 26.63144, 0.0005326288, 0.13280231, 0.0001331572, 200.5344684123993, "5_sampler_config.name='hammingball',model_config.init_sigma=1.5,model_config.num_categories=4"},
	{"categorical-q4", "path_auxiliary", "ratio", "", 2968.558, 0.059371162, 168.90349, 0.014842791, 17.57547092437744, "12_sampler_config.name='path_auxiliary',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q4", "path_auxiliary", "sqrt", "", 1890.2631, 0.03780526, 107.04555, 0.009451315, 17.65849232673645, "11_sampler_config.name='path_auxiliary',model_config.init_sigma=1.5,model_config.num_categories=4,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q4", "randomwalk", "", "", 13.49906, 0.0002699812, 1.5089142, 0.0001349906, 8.946207284927368, "1_sampler_config.name='randomwalk',model_config.init_sigma=1.5,model_config.num_categories=4"},
	{"categorical-q8", "blockgibbs", "", "", 47.660572, 0.0009532114, 0.18543461, 1.4893928e-05, 257.02090883255005, "4_sampler_config.name='blockgibbs',model_config.init_sigma=1.5,model_config.num_categories=8"},
	{"categorical-q8", "dlmc", "ratio", "euler_forward", 6385.527, 0.12771054, 594.95447, 0.031927634, 10.73279881477356, "26_sampler_config.name='dlmc',sampler_config.solver='euler_forward',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q8", "dlmc", "ratio", "interpolate", 49675.83, 0.99351656, 4702.0127, 0.24837914, 10.56480097770691, "22_sampler_config.name='dlmc',sampler_config.solver='interpolate',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q8", "dlmc", "sqrt", "euler_forward", 3019.871, 0.06039742, 330.2228, 0.015099355, 9.144950151443481, "25_sampler_config.name='dlmc',sampler_config.solver='euler_forward',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q8", "dlmc", "sqrt", "interpolate", 49675.824, 0.99351645, 4736.9536, 0.24837911, 10.48687219619751, "21_sampler_config.name='dlmc',sampler_config.solver='interpolate',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q8", "dmala", "ratio", "", 1577.8041, 0.03155608, 177.68086, 0.00788902, 8.8799889087677, "10_sampler_config.name='dmala',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q8", "dmala", "sqrt", "", 1027.3445, 0.020546889, 114.06843, 0.0051367222, 9.00638723373413, "9_sampler_config.name='dmala',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q8", "gwg", "ratio", "", 14.065455, 0.0002813091, 1.5689253, 7.0327274e-05, 8.965025901794434, "18_sampler_config.name='gwg',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q8", "gwg", "sqrt", "", 14.869473, 0.00029738946, 1.6554163, 7.4347365e-05, 8.982316970825195, "17_sampler_config.name='gwg',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q8", "hammingball", "", "", 26.285889, 0.00052571774, 0.11816632, 6.571472e-05, 222.44822931289673, "6_sampler_config.name='hammingball',model_config.init_sigma=1.5,model_config.num_categories=8"},
	{"categorical-q8", "path_auxiliary", "ratio", "", 2141.6846, 0.04283369, 118.88948, 0.010708422, 18.014080047607422, "14_sampler_config.name='path_auxiliary',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='RATIO'"},
	{"categorical-q8", "path_auxiliary", "sqrt", "", 1409.6222, 0.028192444, 51.94494, 0.007048111, 27.13685631752014, "13_sampler_config.name='path_auxiliary',model_config.init_sigma=1.5,model_config.num_categories=8,sampler_config.balancing_fn_type='SQRT'"},
	{"categorical-q8", "randomwalk", "", "", 10.286096, 0.00020572191, 1.1192952, 0.000102860955, 9.189796447753906, "2_sampler_config.name='randomwalk',model_config.init_sigma=1.5,model_config.num_categories=8"},
	{"ising-lambda0.5", "blockgibbs", "", "", 17.150553, 0.00034301105, 0.1423453, 8.575276e-05, 120.48556160926819, "2_sampler_config.name='blockgibbs',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5"},
	{"ising-lambda0.5", "dlmc", "ratio", "euler_forward", 547.883, 0.010957659, 9.390722, 0.0027394148, 58.343008279800415, "20_sampler_config.name='dlmc',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='RATIO',sampler_config.solver='euler_forward'"},
	{"ising-lambda0.5", "dlmc", "ratio", "interpolate", 541.81836, 0.010836367, 9.483987, 0.0027090916, 57.1298086643219, "19_sampler_config.name='dlmc',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='RATIO',sampler_config.solver='interpolate'"},
	{"ising-lambda0.5", "dlmc", "sqrt", "euler_forward", 231.25952, 0.0046251905, 3.99634, 0.0011562976, 57.86782693862915, "18_sampler_config.name='dlmc',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='SQRT',sampler_config.solver='euler_forward'"},
	{"ising-lambda0.5", "dlmc", "sqrt", "interpolate", 502.8339, 0.010056677, 9.37384, 0.0025141693, 53.64225172996521, "17_sampler_config.name='dlmc',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='SQRT',sampler_config.solver='interpolate'"},
	{"ising-lambda0.5", "dmala", "ratio", "", 1.0, 2e-05, 0.017323446, 5e-06, 57.725239753723145, "6_sampler_config.name='dmala',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='RATIO'"},
	{"ising-lambda0.5", "dmala", "sqrt", "", 1.0, 2e-05, 0.017614935, 5e-06, 56.77000904083252, "5_sampler_config.name='dmala',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='SQRT'"},
	{"ising-lambda0.5", "gwg", "ratio", "", 443.17493, 0.008863498, 5.3426304, 0.0022158746, 82.9506995677948, "10_sampler_config.name='gwg',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='RATIO'"},
	{"ising-lambda0.5", "gwg", "sqrt", "", 145.39706, 0.0029079411, 2.1115305, 0.0007269853, 68.85860991477966, "9_sampler_config.name='gwg',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='SQRT'"},
	{"ising-lambda0.5", "path_auxiliary", "ratio", "", 539.0874, 0.010781748, 8.128046, 0.002695437, 66.32434964179993, "8_sampler_config.name='path_auxiliary',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='RATIO'"},
	{"ising-lambda0.5", "path_auxiliary", "sqrt", "", 204.42511, 0.004088502, 3.3107657, 0.0010221255, 61.74556756019592, "7_sampler_config.name='path_auxiliary',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5,sampler_config.balancing_fn_type='SQRT'"},
	{"ising-lambda0.5", "randomwalk", "", "", 7.887518, 0.00015775036, 0.13740736, 7.887518e-05, 57.40244007110596, "1_sampler_config.name='randomwalk',model_config.mu=0.5,model_config.lambdaa=0.5,model_config.init_sigma=1.5"},
	{"ising-lambda1", "blockgibbs", "", "", 16.141077, 0.00032282152, 0.13324448, 8.070538e-05, 121.13879370689392, "4_sampler_config.name='blockgibbs',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3"},
	{"ising-lambda1", "dlmc", "ratio", "euler_forward", 61.479424, 0.0012295884, 1.0511423, 0.0003073971, 58.488201379776, "24_sampler_config.name='dlmc',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='RATIO',sampler_config.solver='euler_forward'"},
	{"ising-lambda1", "dlmc", "ratio", "interpolate", 58.17376, 0.0011634752, 1.0018348, 0.0002908688, 58.067221879959106, "23_sampler_config.name='dlmc',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='RATIO',sampler_config.solver='interpolate'"},
	{"ising-lambda1", "dlmc", "sqrt", "euler_forward", 1.0, 2e-05, 0.017996132, 5e-06, 55.5674934387207, "22_sampler_config.name='dlmc',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='SQRT',sampler_config.solver='euler_forward'"},
	{"ising-lambda1", "dlmc", "sqrt", "interpolate", 1.0, 2e-05, 0.017764382, 5e-06, 56.292418479919434, "21_sampler_config.name='dlmc',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='SQRT',sampler_config.solver='interpolate'"},
	{"ising-lambda1", "dmala", "ratio", "", 1.0, 2e-05, 0.017772986, 5e-06, 56.26516652107239, "12_sampler_config.name='dmala',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='RATIO'"},
	{"ising-lambda1", "dmala", "sqrt", "", 47.572002, 0.00095144, 0.8227683, 0.00023786, 57.819440841674805, "11_sampler_config.name='dmala',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='SQRT'"},
	{"ising-lambda1", "gwg", "ratio", "", 59.23157, 0.0011846314, 0.77923554, 0.00029615784, 76.01240992546082, "16_sampler_config.name='gwg',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='RATIO'"},
	{"ising-lambda1", "gwg", "sqrt", "", 50.912758, 0.0010182551, 0.7759993, 0.00025456378, 65.60928678512573, "15_sampler_config.name='gwg',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='SQRT'"},
	{"ising-lambda1", "path_auxiliary", "ratio", "", 64.77243, 0.0012954486, 0.99870926, 0.00032386216, 64.8561384677887, "14_sampler_config.name='path_auxiliary',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='RATIO'"},
	{"ising-lambda1", "path_auxiliary", "sqrt", "", 48.79613, 0.0009759226, 0.75573575, 0.00024398066, 64.56771874427795, "13_sampler_config.name='path_auxiliary',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3,sampler_config.balancing_fn_type='SQRT'"},
	{"ising-lambda1", "randomwalk", "", "", 7.437058, 0.00014874115, 0.13985847, 7.4370575e-05, 53.17560076713562, "3_sampler_config.name='randomwalk',model_config.mu=1,model_config.lambdaa=1,model_config.init_sigma=3"},
}

// discsLookup returns the published run of a DISCS sampler on a target:
// which is "sampler/balance" or "sampler/balance/solver" (DLMC's
// solver; "interpolate" is the exact one for two states).
func discsLookup(target, which string) (discsResult, bool) {
	if target == "" || which == "" {
		return discsResult{}, false
	}
	parts := strings.Split(which, "/")
	for _, p := range discsPublished {
		if p.target != target || p.sampler != parts[0] {
			continue
		}
		if len(parts) > 1 && p.balance != parts[1] {
			continue
		}
		if len(parts) > 2 && p.solver != parts[2] {
			continue
		}
		return p, true
	}
	return discsResult{}, false
}

// discsBest returns the published run of the largest ESS per second on a
// target.
func discsBest(target string) (discsResult, bool) {
	var best discsResult
	found := false
	for _, p := range discsPublished {
		if p.target == target && (!found || p.essPerSecond > best.essPerSecond) {
			best, found = p, true
		}
	}
	return best, found
}
