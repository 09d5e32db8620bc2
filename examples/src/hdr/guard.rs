//! Refusing to write over the input.
//!
//! An output path that names the input file, however spelled (`c.exr`,
//! `./c.exr`, an absolute path, a path through `..` or a symbolic link, a
//! hard link), would replace the original HDR image with the tone-mapped
//! one. Paths are therefore compared by file identity (device and inode on
//! Unix, through the `same-file` crate), not as strings, before anything is
//! read or written. A path that does not exist yet cannot be the input.
//!
//! Two outputs of one run (`-o` and `--before`) must also differ; as
//! neither need exist yet, they are compared by their directory's
//! canonical path and their file name.

use anyhow::{bail, Result};
use same_file::Handle;
use std::path::{Path, PathBuf};

/// Where an image is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in demo scene.
    Demo,
    /// A file, or standard input when the path is `-`.
    Path(PathBuf),
}

impl Source {
    /// Whether this is standard input (`-`).
    pub fn is_stdin(&self) -> bool {
        matches!(self, Source::Path(p) if p.as_os_str() == "-")
    }

    /// The name for messages: the path as given, `-` for standard input,
    /// `demo scene` for the demo.
    pub fn name(&self) -> String {
        match self {
            Source::Demo => "demo scene".into(),
            Source::Path(p) => p.display().to_string(),
        }
    }

    /// The file's identity, if it has one (`None` for the demo scene or a
    /// file that cannot be opened, which the reader reports itself).
    fn handle(&self) -> Option<Handle> {
        match self {
            Source::Demo => None,
            Source::Path(_) if self.is_stdin() => Handle::stdin().ok(),
            Source::Path(p) => Handle::from_path(p).ok(),
        }
    }
}

/// Fails when `output` (written as `what`, e.g. `-o`) is the same file as
/// `input`, standard input included (`hdr-compress - -o c.exr < c.exr`).
pub fn refuse_overwriting_input(input: &Source, output: &Path, what: &str) -> Result<()> {
    let (Some(a), Ok(b)) = (input.handle(), Handle::from_path(output)) else {
        return Ok(());
    };
    if a == b {
        bail!(
            "{}: {what} names the input file {}; refusing to overwrite it",
            output.display(),
            input.name()
        );
    }
    Ok(())
}

/// Whether `a` and `b` name the same file, existing or not: by identity
/// when both exist, else by canonical directory and file name.
pub fn same_destination(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (Handle::from_path(a), Handle::from_path(b)) {
        return x == y;
    }
    let place = |p: &Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        (
            dir.canonicalize().unwrap_or(dir),
            p.file_name().map(|n| n.to_os_string()),
        )
    };
    place(a) == place(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        let input = d.join("c.exr");
        std::fs::write(&input, b"original").unwrap();
        let source = Source::Path(input.clone());
        let spellings = [
            input.clone(),
            d.join(".").join("c.exr"),
            d.join("sub").join("..").join("c.exr"),
        ];
        for s in &spellings {
            let err = refuse_overwriting_input(&source, s, "-o")
                .unwrap_err()
                .to_string();
            assert!(err.contains("refusing to overwrite"), "{err}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&input, d.join("link.exr")).unwrap();
            std::fs::hard_link(&input, d.join("hard.exr")).unwrap();
            for name in ["link.exr", "hard.exr"] {
                assert!(refuse_overwriting_input(&source, &d.join(name), "-o").is_err());
            }
        }
        assert!(refuse_overwriting_input(&source, &d.join("new.png"), "-o").is_ok());
        assert!(refuse_overwriting_input(&Source::Demo, &input, "-o").is_ok());
        assert_eq!(std::fs::read(&input).unwrap(), b"original");
    }

    #[test]
    fn destinations_compare_before_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        let a = d.join("out.png");
        assert!(same_destination(&a, &d.join("sub/../out.png")));
        assert!(!same_destination(&a, &d.join("sub/out.png")));
        std::fs::write(&a, b"x").unwrap();
        assert!(same_destination(&a, &d.join("./out.png")));
        assert!(!same_destination(&a, &d.join("other.png")));
    }
}
