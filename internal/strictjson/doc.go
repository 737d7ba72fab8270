// Package strictjson decodes JSON that a user wrote by hand, strictly:
// every object key must be spelled exactly as the target's field (encoding/json
// alone matches keys case-insensitively), no key may appear twice in one
// object (encoding/json alone keeps the last), unknown keys are errors, and
// errors name the line and column. Numbers that overflow float64 are errors
// too (encoding/json already refuses them).
//
// Hostile input costs time and memory in proportion to its size: arrays and
// objects may nest at most MaxDepth deep, which a scan checks before
// anything is decoded, and the path of a key (for errors) is written out
// only for an error. A leading UTF-8 byte order mark is ignored, as RFC
// 8259 allows (editors on Windows write one).
package strictjson
