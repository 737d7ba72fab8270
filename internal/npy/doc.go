// Package npy writes (and reads back) arrays in NumPy's NPY format, version
// 1.0: the magic string "\x93NUMPY", the version bytes 1 and 0, a
// little-endian uint16 header length, then an ASCII header, a Python dict
// literal such as
//
//	{'descr': '<f8', 'fortran_order': False, 'shape': (4, 1000, 100), }
//
// padded with spaces and ended by a newline so that the data start at a
// multiple of 64 bytes, then the values in C order (the last index varies
// fastest), little-endian. numpy.load reads such a file with no options.
//
// The element types are float64 ('<f8'), float32 ('<f4'), int8 ('|i1'),
// int16 ('<i2'), int32 ('<i4'), int64 ('<i8') and uint8 ('|u1').
package npy
