"""Tests of the Python package against the dstein binary it drives.

Run from the repository root: python -m unittest discover -s python/tests
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import dstein

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRID = os.path.join(ROOT, "examples", "ising-grid.json")
SPRINKLER = os.path.join(ROOT, "examples", "sprinkler.uai")


class TestSample(unittest.TestCase):
    def test_draws_summary_and_xarray(self):
        fit = dstein.sample(GRID, method="gibbs", chains=3, draws=200, seed=2)
        self.assertEqual(fit.draws.shape, (3, 200, 100))
        self.assertEqual(set(np.unique(fit.draws)), {-1.0, 1.0})
        self.assertEqual(fit.variables[:2], ["z0", "z1"])
        s = fit.summary()
        for col in ["mean", "sd", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat", "5%", "50%", "95%", "ci90_low", "ci90_high"]:
            self.assertIn(col, s.columns)
        self.assertIn("log_p", s.index)
        # Quantiles for log p* (nan for the variables), ordered.
        self.assertTrue(s.loc["log_p", "5%"] <= s.loc["log_p", "50%"] <= s.loc["log_p", "95%"])
        self.assertTrue(np.isnan(s.loc["z0", "5%"]))
        # The run's mean of z0 is Rao–Blackwellised; dstein.summary of the
        # same draws without a model gives their frequency mean exactly,
        # and the two agree within 4 standard errors of their difference.
        freq, _, _ = dstein.summary(fit.draws, variables=fit.variables)
        raw = fit.draws[:, :, 0].mean()
        self.assertAlmostEqual(freq.loc["z0", "mean"], raw, places=12)
        se = np.hypot(s.loc["z0", "mcse_mean"], freq.loc["z0", "mcse_mean"])
        self.assertLess(abs(s.loc["z0", "mean"] - raw), 4 * se)
        ds = fit.to_xarray()
        self.assertEqual(ds["z"].dims, ("chain", "draw", "variable"))
        self.assertEqual(list(ds["variable"].values[:2]), ["z0", "z1"])
        np.testing.assert_array_equal(ds["z"].values, fit.draws)
        # lp__ per draw, whose average is the summary's log_p row.
        self.assertEqual(ds["lp__"].dims, ("chain", "draw"))
        self.assertEqual(fit.lp__.shape, (3, 200))
        self.assertAlmostEqual(fit.lp__.mean(), s.loc["log_p", "mean"], places=9)

    def test_same_seed_same_draws(self):
        a = dstein.sample(GRID, method="gibbs", chains=2, draws=50, seed=7)
        b = dstein.sample(GRID, method="gibbs", chains=2, draws=50, seed=7)
        np.testing.assert_array_equal(a.draws, b.draws)

    def test_models_from_arrays(self):
        J = np.zeros((4, 4))
        J[0, 1] = J[1, 0] = 0.5
        fit = dstein.sample(dstein.ising_model(J, fields=[0.1, 0, 0, -0.2]), method="exact", chains=1, draws=4000)
        ex = dstein.exact(dstein.ising_model(J, fields=[0.1, 0, 0, -0.2]))
        # 4000 independent exact draws: the frequency mean of z3 is within
        # 5 standard errors (≤ 1/√4000 each) of the exact mean.
        self.assertLess(abs(fit.draws[0, :, 3].mean() - ex["means"][3]), 5 / np.sqrt(4000))
        # lp__ is log p*(z) = Σ_{i<j} J_ij z_i z_j + h·z of each draw.
        z = fit.draws[0]
        h = np.array([0.1, 0, 0, -0.2])
        np.testing.assert_allclose(fit.lp__[0], 0.5 * np.einsum("ri,ij,rj->r", z, J, z) + z @ h, rtol=0, atol=1e-12)
        rbm = dstein.rbm_model(np.full((3, 2), 0.3), [0, 0.1, -0.1], [0.2, -0.2])
        self.assertEqual(dstein.sample(rbm, method="gibbs", chains=2, draws=20).draws.shape, (2, 20, 3))
        cat = dstein.categorical_model([[0.2, 0.8], [0.1, 0.3, 0.6]])
        self.assertEqual(dstein.exact(cat)["means"][0], 0.8)

    def test_evidence_keeps_the_files_numbering(self):
        fit = dstein.sample(SPRINKLER, method="gibbs", chains=2, draws=100, evidence=SPRINKLER + ".evid")
        self.assertEqual(fit.json["variables"], ["z0", "z1", "z2", "z4"])
        self.assertEqual(fit.json["evidence"], {"z3": 1})
        # The draws array has every variable of the file, the evidence one fixed.
        self.assertEqual(fit.draws.shape[2], 5)
        self.assertTrue((fit.draws[:, :, 3] == 1).all())

    def test_bayesian_network_by_name(self):
        asia = os.path.join(ROOT, "model", "bif", "testdata", "asia.bif")
        ex = dstein.exact(asia, given={"smoke": "yes", "xray": "yes"})
        self.assertEqual(ex["names"][3], "lung")
        self.assertAlmostEqual(ex["marginals"][3][0], 0.645991, places=6)
        fit = dstein.sample(asia, method="exact", chains=1, draws=4000, given="smoke=yes,xray=yes")
        self.assertEqual(fit.json["evidence"], {"smoke": 0, "xray": 0})
        # 4000 exact draws: lung's "yes" frequency within 5 SE of the exact value.
        lung = fit.variables.index("lung")
        self.assertLess(abs((fit.draws[0, :, lung] == 0).mean() - 0.645991), 5 * np.sqrt(0.25 / 4000))

    def test_summary_given_the_runs_evidence(self):
        asia = os.path.join(ROOT, "model", "bif", "testdata", "asia.bif")
        fit = dstein.sample(asia, method="gibbs", chains=2, draws=300, given="smoke=yes,xray=yes")
        _, _, js = dstein.summary(fit.draws, model=asia, variables=fit.variables, given={"smoke": "yes", "xray": "yes"})
        self.assertEqual(js["evidence"], fit.json["evidence"])
        self.assertEqual(js["mean"], fit.json["mean"])

    def test_boolean_settings_and_particles(self):
        # A boolean setting is one word (--stratified=true); it was sent as two.
        fit = dstein.sample(GRID, method="gibbs", chains=2, draws=20, settings={"stratified": True})
        self.assertTrue(fit.json["stages"][0]["settings"]["stratified"])
        # The paper's GF-SVGD: n particles in replicates, not chains of draws.
        fit = dstein.sample(GRID, method="gfsvgd", n=16, iters=5, replicates=2)
        self.assertEqual(fit.draws.shape, (2, 16, 100))
        self.assertEqual(fit.dims, ("replicate", "particle"))
        self.assertEqual(dict(fit.to_xarray().sizes), {"replicate": 2, "particle": 16, "variable": 100})
        self.assertIn("2 replicates × 16 particles", repr(fit))
        with self.assertRaises(ValueError):
            dstein.sample(GRID, method="gibbs", chains=2, draws=20, iters=5)
        with self.assertRaises(ValueError):  # n= takes the place of chains=
            dstein.sample(GRID, method="gfsvgd", n=16, chains=2)

    def test_inputs_checked_in_python(self):
        # Whole numbers are not cut (seed=1.7 was seed 1), NaN is named.
        for kw in ({"seed": 1.7}, {"chains": 2.5}, {"draws": True}):
            with self.assertRaises(ValueError):
                dstein.sample(GRID, method="gibbs", **dict({"chains": 2, "draws": 10}, **kw))
        J = np.zeros((3, 3)); J[0, 1] = J[1, 0] = np.nan
        with self.assertRaisesRegex(ValueError, r"couplings\[0, 1\] is nan"):
            dstein.ising_model(J)
        with self.assertRaisesRegex(ValueError, r"model\['edges'\]\[0\]\[2\] is inf"):
            dstein.exact({"type": "ising", "n": 2, "edges": [[0, 1, float("inf")]]})
        with self.assertRaisesRegex(ValueError, r"W\[1\]\[0\] is nan"):
            dstein.rbm_model([[0.1], [np.nan]], [0, 0], [0])
        with self.assertRaisesRegex(ValueError, r"probs\[0\]\[1\] is nan"):
            dstein.categorical_model([[0.5, np.nan]])
        with self.assertRaisesRegex(ValueError, "must hold numbers"):
            dstein.gof(GRID, np.full((3, 100), "a"))

    def test_errors_are_exceptions(self):
        with self.assertRaises(dstein.DsteinError) as cm:
            dstein.sample(GRID, method="no-such-method", chains=2, draws=10)
        self.assertIn("no-such-method", str(cm.exception))
        self.assertEqual(cm.exception.exit_code, 2)
        with self.assertRaises(dstein.DsteinError) as cm:
            dstein.sample({"type": "ising", "n": 2, "edges": [[0, 5, 1.0]]}, chains=2, draws=10)
        # The message names what the user gave, not the package's temporary files.
        self.assertIn("the model dict", str(cm.exception))
        self.assertNotIn("dstein-", str(cm.exception))
        with self.assertRaises(dstein.DsteinError) as cm:
            dstein.gof({"type": "ising", "n": 2, "edges": [[0, 1, 1.0]]}, np.array([[1, 1], [1, 7]]))
        self.assertIn("the samples array: row 1 (z1): 7 is not a state", str(cm.exception))
        self.assertNotIn("dstein-", str(cm.exception))
        # Positions in a draws array are numpy's, from 0.
        draws = np.ones((3, 20, 2))
        draws[1, 7, 1] = np.nan
        with self.assertRaisesRegex(dstein.DsteinError, r"the draws array: draws\[1, 7, 1\] is NaN"):
            dstein.summary(draws)
        draws[1, 7, 1] = 0.5
        with self.assertRaisesRegex(dstein.DsteinError, r"the draws array: draws\[1, 7\]: z1 = 0.5 is not one of its states"):
            dstein.summary(draws, model={"type": "ising", "n": 2, "edges": [[0, 1, 0.3]]})
        old = os.environ.get("DSTEIN_BIN")
        os.environ["DSTEIN_BIN"] = os.path.join(ROOT, "no-such-dstein")
        try:
            with self.assertRaisesRegex(dstein.DsteinError, r"cannot run DSTEIN_BIN \(.*no-such-dstein\)"):
                dstein.exact(GRID)
        finally:
            if old is None:
                del os.environ["DSTEIN_BIN"]
            else:
                os.environ["DSTEIN_BIN"] = old


class TestSummary(unittest.TestCase):
    def test_numpy_draws_and_a_stuck_chain(self):
        rng = np.random.default_rng(3)
        draws = rng.integers(0, 2, size=(4, 400, 2)).astype(float)
        table, warnings, js = dstein.summary(draws, variables=["a", "b"])
        self.assertEqual(list(table.index), ["a", "b"])
        self.assertEqual(warnings, [])
        self.assertLess(abs(table.loc["a", "r_hat"] - 1), 0.02)
        draws[3] = 1.0
        table, warnings, js = dstein.summary(draws)
        self.assertTrue(any("R̂" in w for w in warnings), warnings)

    def test_same_numbers_as_the_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            csv, js = os.path.join(tmp, "d.csv"), os.path.join(tmp, "r.json")
            subprocess.check_call([dstein.binary_path(), "sample", "--model", GRID, "--method", "gibbs", "--chains", "3",
                                   "--draws", "200", "--out", csv, "--json", js], stdout=subprocess.DEVNULL)
            table, _, _ = dstein.summary(csv, model=GRID)
            with open(js) as f:
                run = json.load(f)
        for q in run["error_bars"]["quantities"]:
            self.assertEqual(table.loc[q["name"], "ess_bulk"], q["ess_bulk"])
            self.assertEqual(table.loc[q["name"], "mean"], q["mean"])


class TestTestsAndCompression(unittest.TestCase):
    def test_gof_and_compress(self):
        fit = dstein.sample(GRID, method="exact", chains=1, draws=300, seed=4)
        res = dstein.gof(GRID, fit.draws, test="mmd", bootstrap=200)
        self.assertIn("p_value", res)
        self.assertGreater(res["p_value"], 0.0)
        pts = dstein.compress(GRID, fit.draws, 20)
        self.assertEqual(pts.shape, (20, 100))
        # A sample that is one state repeated: the bootstrap's caveat, and
        # the simulated null instead, which the default picks by itself.
        m = dstein.ising_model(np.eye(6, k=1) * 0.4 + np.eye(6, k=-1) * 0.4,
                               fields=np.full(6, 3.0))
        up = np.ones((40, 6), dtype=int)
        with self.assertWarns(dstein.DsteinWarning) as cm:
            res = dstein.gof(m, up, test="bksd", bootstrap_kind="multinomial")
        self.assertIn("one state repeated", str(cm.warning))
        self.assertFalse(res["level_checked"])
        self.assertIn("one state repeated", res["warning"])
        res = dstein.gof(m, up, test="bksd", bootstrap=99, bootstrap_kind="simulation")
        self.assertEqual(res["bootstrap_kind"], "simulation")
        self.assertTrue(res["level_checked"])
        res = dstein.gof(m, up, test="bksd", bootstrap=99)
        self.assertEqual(res["bootstrap_kind"], "simulation")
        self.assertIn("one state repeated", res["bootstrap_reason"])


class TestNamedNetwork(unittest.TestCase):
    def test_arrays_of_a_bayesian_network(self):
        # The package writes arrays with columns z0, z1, …; dstein reads
        # them in a network's order although its variables have names.
        asia = os.path.join(ROOT, "model", "bif", "testdata", "asia.bif")
        fit = dstein.sample(asia, method="exact", chains=1, draws=200, seed=3)
        self.assertEqual(fit.variables[:2], ["asia", "tub"])
        res = dstein.gof(asia, fit.draws, test="bksd", bootstrap=200)
        self.assertIn("p_value", res)
        self.assertEqual(dstein.compress(asia, fit.draws, 5).shape, (5, 8))
        table, _, _ = dstein.summary(fit.draws, model=asia)
        self.assertIn("lung=no", table.index)


class TestModelsFromArrays(unittest.TestCase):
    def test_categorical_probs_per_variable(self):
        m = dstein.categorical_model([[0.2, 0.3, 0.5]])
        self.assertEqual(m["variables"][0]["probs"], [0.2, 0.3, 0.5])
        with self.assertRaisesRegex(ValueError, "one list of probabilities per variable"):
            dstein.categorical_model([0.2, 0.3, 0.5])


class TestWarnings(unittest.TestCase):
    def test_dstein_warnings_become_python_warnings(self):
        # A BAYES table whose row for z0 = 0 sums to 0.5: dstein reads it
        # as a factor and warns; the package issues the warning, once.
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.uai")
            with open(bad, "w") as f:
                f.write("BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2\n0.3 0.7\n4\n0.2 0.3 0.5 0.5\n")
            with self.assertWarns(dstein.DsteinWarning) as cm:
                res = dstein.exact(bad)
            self.assertIn("row 0 of table 1 (z1 given its parents) sums to 0.5", str(cm.warning))
            self.assertIn("log_z", res)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error", dstein.DsteinWarning)
            dstein.exact(SPRINKLER)  # a sound network: no warning


class TestInterrupt(unittest.TestCase):
    def test_ctrl_c_stops_the_binary_and_writes_nothing(self):
        # A child Python process runs a long sample and gets SIGINT: the
        # KeyboardInterrupt stops dstein (exit 130, nothing written) and is
        # raised again.
        code = ("import dstein, sys\n"
                "try:\n"
                "    dstein.sample(%r, method='gibbs', chains=4, draws=100000, thin=100)\n"
                "except KeyboardInterrupt:\n"
                "    sys.exit(42)\n") % GRID
        # SIGINT to Python alone, then to the whole process group (a
        # terminal's Ctrl-C, which reaches dstein too).
        for group in (False, True):
            p = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ), start_new_session=True)
            time.sleep(3)
            if group:
                os.killpg(p.pid, signal.SIGINT)
            else:
                p.send_signal(signal.SIGINT)
            self.assertEqual(p.wait(timeout=60), 42, "group signal" if group else "signal to Python")


if __name__ == "__main__":
    unittest.main()


class TestReadme(unittest.TestCase):
    def test_the_readmes_python_example_runs(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            text = f.read()
        section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
        code = section.split("```python\n", 1)[1].split("```", 1)[0]
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            env = {}
            exec(compile(code, "README.md (Python)", "exec"), env)
        finally:
            os.chdir(cwd)
        self.assertEqual(env["fit"].draws.shape, (4, 500, 100))
        self.assertEqual(env["warnings"], [])
