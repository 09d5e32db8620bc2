//! The axes of the variant space besides the block shape and pixels per
//! thread (in [`crate::vocab`]): boundary handling, memory per accessor and
//! mask handling, each a small enum with its override-syntax name.

/// How reads outside an accessor's region are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoundaryScheme {
    /// Nine border regions + interior + fallback: each block runs the body
    /// specialised for its region (checks only on the sides that need them),
    /// chosen from region starts computed on the host. Row-only or
    /// column-only footprints drop the regions they do not need.
    Regions,
    /// One body with boundary checks on every read.
    Generic,
}

/// Where an accessor's pixels are read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryKind {
    /// Plain global memory.
    Global,
    /// The read-only path: `const __restrict__` + `__ldg` (CUDA),
    /// `const __global T* restrict` (OpenCL).
    ReadOnly,
    /// A texture object (CUDA, over the linear buffer) or an `image2d_t`
    /// (OpenCL).
    Texture,
    /// A tile of the block's footprint staged in shared (local) memory with a
    /// barrier, rows padded against bank conflicts. Needs a bounded footprint.
    LocalTile,
}

/// How mask coefficients reach the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MaskHandling {
    /// Coefficients known when the IR is built are printed as literals and
    /// the window loops unrolled (constant-folded).
    Literal,
    /// Coefficients are passed at launch in constant memory.
    ConstantMemory,
}

impl BoundaryScheme {
    /// Both schemes.
    pub const ALL: [BoundaryScheme; 2] = [BoundaryScheme::Regions, BoundaryScheme::Generic];
    /// The override-syntax name.
    pub fn name(self) -> &'static str {
        match self {
            BoundaryScheme::Regions => "regions",
            BoundaryScheme::Generic => "generic",
        }
    }
}

impl MemoryKind {
    /// Every kind.
    pub const ALL: [MemoryKind; 4] = [
        MemoryKind::Global,
        MemoryKind::ReadOnly,
        MemoryKind::Texture,
        MemoryKind::LocalTile,
    ];
    /// The override-syntax name.
    pub fn name(self) -> &'static str {
        match self {
            MemoryKind::Global => "global",
            MemoryKind::ReadOnly => "readonly",
            MemoryKind::Texture => "texture",
            MemoryKind::LocalTile => "local",
        }
    }
    /// One letter, for variant keys.
    pub fn letter(self) -> char {
        match self {
            MemoryKind::Global => 'g',
            MemoryKind::ReadOnly => 'r',
            MemoryKind::Texture => 't',
            MemoryKind::LocalTile => 'l',
        }
    }
}

impl MaskHandling {
    /// The override-syntax name.
    pub fn name(self) -> &'static str {
        match self {
            MaskHandling::Literal => "literal",
            MaskHandling::ConstantMemory => "constant",
        }
    }
}
