// Package uai reads networks, evidence and marginals in the text formats of
// the UAI inference competitions, and writes marginals.
//
// A network file (Read) is
//
//	MARKOV                    or BAYES
//	3                         number of variables
//	2 2 3                     cardinality of each variable
//	2                         number of factors
//	2 0 1                     each factor's scope: its size, then its variables
//	2 1 2
//	4  0.1 0.9 0.8 0.2        each factor's table, in the order of the scopes:
//	6  1 2 3 4 5 6            the number of entries, then the entries
//
// Variables are numbered from 0, and so are factors in error messages. A
// table lists one non-negative value per assignment of its scope, row-major
// with the last scope variable changing fastest. A BAYES file has one
// conditional probability table per variable, whose scope lists the parents
// and then the child; Read treats it as any other factor, and CheckBayes
// says whether the tables are conditional distributions (rows summing to 1
// within RowTolerance, one table per child), which the commands report as
// a warning.
//
// The reader takes the format loosely where files in use differ and strictly
// everywhere else. The header may be in any letter case. Numbers may be
// separated by any whitespace and spread over lines at will; lines whose
// first non-blank character is 'c' are comments (in evidence and MAR files
// too);
// values may be written in any decimal notation (1e-3, 1E+2, .5, 5., 0.25),
// including values beyond float64's range such as 1e-400, whose logarithms
// are kept exactly; variables may have a single state; scopes may be empty
// (a constant factor with one entry). It rejects, naming the line: a header
// other than MARKOV or BAYES, counts that are not non-negative integers,
// cardinalities below 1, scopes that name a variable out of range or twice,
// a table whose declared size differs from the product of its scope's
// cardinalities, entries that are negative, NaN, infinite or not numbers, a
// table that is zero everywhere, a file that ends early and anything after
// the last table.
//
// Evidence files (ReadEvidence) come in two layouts, told apart by their
// parity, and marginal files (ReadMAR, WriteMAR) follow the competition's
// MAR result format; see those functions.
package uai
