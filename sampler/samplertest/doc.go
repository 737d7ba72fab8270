// Package samplertest is the conformance kit of sampling methods: the
// small models on which every method is checked against exact enumeration,
// a helper that runs a registered method through a pipeline, and the
// benchmark of one step on the experiments' models.
package samplertest
