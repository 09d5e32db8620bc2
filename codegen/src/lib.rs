//! OpenCL C and CUDA C code generation from the kernel IR.
