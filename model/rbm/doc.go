// Package rbm implements the Bernoulli restricted Boltzmann machine with ±1
// visible units z ∈ {−1,1}^d and ±1 hidden units h ∈ {−1,1}^M:
//
//	p(z, h) ∝ exp(zᵀWh + bᵀz + cᵀh),
//
// whose visible marginal, summing h out, is
//
//	log p*(z) = bᵀz + Σ_k log(2 cosh((Wᵀz)_k + c_k)).
//
// (The paper writes log(1 + exp(·)), the form for 0/1 hidden units; with ±1
// hidden units the sum over h_k gives 2 cosh.) W is d×M: W[i][k] couples
// visible unit i to hidden unit k.
//
// NewBinary reads the parameters of an RBM with {0, 1} units (the
// convention of Gibbs-with-Gradients and DISCS) as the ±1 RBM of the same
// distribution (W'/4; the biases pick up a quarter of W's row and column
// sums) whose variables report the state values 0 and 1.
package rbm
