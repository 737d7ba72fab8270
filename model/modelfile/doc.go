// Package modelfile reads and writes dstein's JSON model files.
//
// A model file holds one JSON object whose "type" names the model:
//
//	{"type":"categorical","variables":[{"states":[-1,-0.5,0,0.5,1],"probs":[0.1,0.2,0.3,0.1,0.3]}]}
//	{"type":"ising","grid":{"rows":10,"cols":10,"periodic":false},"coupling":0.1,"field":0.0}
//	{"type":"ising","n":3,"edges":[[0,1,0.5],[1,2,-0.3]],"fields":[0.1,0,0]}
//	{"type":"ising","complete":{"n":5},"coupling":0.05}
//	{"type":"potts","q":3,"grid":{"rows":5,"cols":5,"periodic":true},"coupling":1.0,"states":["red","green","blue"]}
//	{"type":"rbm","W":[[0.1,-0.2],[0.3,0.0],[0.05,0.1]],"b":[0,0.1,-0.1],"c":[0.2,-0.2]}
//	{"type":"rbm","visible":100,"hidden":25,"random":{"w_std":0.2236,"bias_std":1,"seed":7}}
//
// The README documents every field. Unknown fields are errors (a typo must
// not silently change a model), and every error names the file and what
// was expected.
package modelfile
