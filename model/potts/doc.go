// Package potts implements Potts models: q ≥ 2 states per variable, the
// values 0, 1, …, q−1, on any graph:
//
//	log p*(z) = Σ_{(i,j)∈E} J_ij·[z_i = z_j] + Σ_i h_i(z_i),
//
// each edge counted once, with a field h_i(s) per variable and state. With
// q = 2 it is an Ising model with couplings J/2 and fields (h_i(1) − h_i(0))/2
// up to a constant. Builders cover the rows×cols grid (open or periodic
// boundary, with the edges and edge order of ising.GridEdges) and an
// explicit edge list; states may carry names (WithStateNames), which run
// summaries print.
//
// Its relaxation (model.Relaxed) is Σ_e J_e Σ_s m_is·m_js + Σ_i Σ_s
// h_i(s)·m_is, linear in each variable's memberships: at a one-hot state,
// variable i's block of the gradient is h_i(s) + Σ_j J_ij·[z_j = s], whose
// differences are exact changes of log p*, so gradient-guided samplers need
// no separate proposal gradient. FactorGraph gives the same distribution as
// a pairwise factor graph, for variable elimination.
package potts
