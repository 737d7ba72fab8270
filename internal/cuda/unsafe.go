package cuda

import "unsafe"

// unsafeAdd is p + i bytes, for reading a C string the driver owns.
func unsafeAdd(p *byte, i int) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(p), i) }
