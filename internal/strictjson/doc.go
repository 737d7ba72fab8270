// Package strictjson decodes JSON that a user wrote by hand, strictly:
// every object key must be spelled exactly as the target's field (encoding/json
// alone matches keys case-insensitively), no key may appear twice in one
// object (encoding/json alone keeps the last), unknown keys are errors, and
// errors name the line and column. Numbers that overflow float64 are errors
// too (encoding/json already refuses them).
package strictjson
