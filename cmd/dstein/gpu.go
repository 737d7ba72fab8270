package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dstein/dstein/internal/cuda"
)

func newGPUCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "gpu",
		Short: "Report the NVIDIA GPUs dstein can use",
		Long: `Report the NVIDIA GPUs dstein can use: the driver library, the CUDA version it
supports, the runtime compiler (NVRTC, which compiles dstein's CUDA kernels at run
time; libnvrtc.so.13, .12 or CUDA 11.8's, or the path in ` + cuda.NVRTCEnv + `), cuBLAS
(the matrix products; libcublas.so.13 or .12, or ` + cuda.CUBLASEnv + `), and each device's
name, memory and compute capability.

dstein needs no CUDA to build: it opens the driver library (libcuda.so.1, or
the path in ` + cuda.DriverEnv + `) when a command asks for a GPU, and only then
(sample --device cuda with --method gfsvgd, gibbs or pt). Without a usable GPU it says
why in one line and exits with code 4.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := cuda.Load()
			if err != nil {
				return err
			}
			devs, err := d.Devices()
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "driver %s, CUDA %d.%d\n", d.Path, d.Version/1000, d.Version%1000/10)
			if n, err := cuda.LoadNVRTCFor(d.Version); err != nil {
				fmt.Fprintf(e.stdout, "runtime compiler: none (%v)\n", err)
			} else {
				fmt.Fprintf(e.stdout, "runtime compiler %s, NVRTC %d.%d\n", n.Path, n.Major, n.Minor)
			}
			if b, err := cuda.LoadCUBLASFor(d.Version); err != nil {
				fmt.Fprintf(e.stdout, "cuBLAS: none (%v)\n\n", err)
			} else {
				fmt.Fprintf(e.stdout, "cuBLAS %s\n\n", b.Path)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "device\tname\tmemory\tcompute capability")
			for _, dev := range devs {
				fmt.Fprintf(tw, "%d\t%s\t%.1f GiB\t%d.%d\n", dev.Ordinal, dev.Name, float64(dev.Memory)/(1<<30), dev.Major, dev.Minor)
			}
			return tw.Flush()
		},
	}
}
