// Package exact computes exact answers for discrete models: the log
// normaliser log Z, every marginal and the means E[z_i], by brute-force
// enumeration of the joint state space. It is the ground truth against which
// dstein's samplers and tests are checked on small models.
package exact
