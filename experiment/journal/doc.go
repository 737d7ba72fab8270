// Package journal keeps an experiment run's finished trials so that an
// interrupted run resumes where it stopped, shards run apart and join, and
// a published result can be rebuilt from its trials alone.
//
// A journal is two files in the run's directory: NAME.trials.csv, tidy
// rows method,x,trial,metric,value with each trial closed by a row that
// carries its rows' checksum, and NAME.trials.json, the settings that made
// them (Settings). Open locks the directory for the experiment, reads and
// checks an existing journal against the run's settings (Spec) and defers
// every write until the first new trial is recorded; Record appends one
// unit of work (Key: a method at one setting in one trial) and syncs;
// Finish and Close write what opening deferred. ReadShard and Join read
// the journals of shard runs and join them in trial order; Pack and
// ReadFile handle the packed form (NAME.trials.csv.gz) that committed
// results keep. The experiment package decides what a unit computes; this
// package only keeps, checks and joins what was computed.
package journal
