// Package categorical implements the product categorical model: d independent
// variables, each with its own state values and probabilities.
//
// It is the paper's simplest target (its appendix samples one variable with
// states {−1, −0.5, 0, 0.5, 1} and probabilities {0.1, 0.2, 0.3, 0.1, 0.3}),
// and a useful check for samplers because every marginal is known in closed
// form. States may have probability zero.
package categorical
