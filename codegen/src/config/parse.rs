//! Config overrides: `block=32x4,ppt=4,boundary=regions,memory=local,mask=literal`.
//!
//! Every key is optional; the ones given replace the heuristic choice.
//! `memory=KIND` applies to every accessor, `memory=K0/K1/…` gives one kind
//! per accessor in slot order. Kinds: `global`, `readonly`, `texture`,
//! `local`; boundary: `regions`, `generic`; ppt: 1, 4, 8; mask: `literal`,
//! `constant`. The result is validated against the target by
//! [`Config::choose`](super::Config::choose).

use super::axes::{BoundaryScheme, MaskHandling, MemoryKind};
use super::variant::Config;
use crate::vocab::{BlockShape, PixelsPerThread};
use crate::{Error, Result};

/// The environment variable read by [`ConfigOverride::from_env`].
pub const ENV_VAR: &str = "HIPACC_CONFIG";

/// A partial config: the axes a user fixed.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ConfigOverride {
    /// Boundary scheme.
    pub boundary: Option<BoundaryScheme>,
    /// One kind for every accessor (one entry) or one per accessor.
    pub memory: Option<Vec<MemoryKind>>,
    /// Rows per thread.
    pub pixels_per_thread: Option<PixelsPerThread>,
    /// Block shape.
    pub block: Option<BlockShape>,
    /// Mask handling.
    pub masks: Option<MaskHandling>,
}

impl ConfigOverride {
    /// Parses the override syntax (see the module docs). Empty text is an
    /// empty override.
    ///
    /// ```
    /// use hipacc_codegen::{BlockShape, ConfigOverride, PixelsPerThread};
    /// let o = ConfigOverride::parse("block=32x4,ppt=4,boundary=regions,memory=local")?;
    /// assert_eq!(o.block, Some(BlockShape { x: 32, y: 4 }));
    /// assert_eq!(o.pixels_per_thread, Some(PixelsPerThread::Four));
    /// assert!(ConfigOverride::parse("ppt=3").is_err());
    /// # Ok::<(), hipacc_codegen::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<ConfigOverride> {
        let err = |reason: String| Error::Override {
            text: text.to_string(),
            reason,
        };
        let mut o = ConfigOverride::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| err(format!("`{item}` is not `key=value`")))?;
            let value = value.trim();
            match key.trim() {
                "block" => o.block = Some(parse_block(value).map_err(err)?),
                "ppt" => {
                    let n: u32 = value
                        .parse()
                        .map_err(|_| err(format!("ppt `{value}` is not a number")))?;
                    o.pixels_per_thread = Some(
                        PixelsPerThread::from_count(n)
                            .ok_or_else(|| err(format!("ppt must be 1, 4 or 8, not {n}")))?,
                    );
                }
                "boundary" => {
                    o.boundary = Some(match value {
                        "regions" => BoundaryScheme::Regions,
                        "generic" => BoundaryScheme::Generic,
                        _ => {
                            return Err(err(format!(
                                "boundary `{value}` is not `regions` or `generic`"
                            )))
                        }
                    })
                }
                "memory" => {
                    let kinds = value
                        .split('/')
                        .map(|k| parse_memory(k.trim()))
                        .collect::<std::result::Result<Vec<_>, _>>()
                        .map_err(err)?;
                    o.memory = Some(kinds);
                }
                "mask" => {
                    o.masks = Some(match value {
                        "literal" => MaskHandling::Literal,
                        "constant" => MaskHandling::ConstantMemory,
                        _ => {
                            return Err(err(format!(
                                "mask `{value}` is not `literal` or `constant`"
                            )))
                        }
                    })
                }
                other => {
                    return Err(err(format!(
                        "unknown key `{other}` (keys: block, ppt, boundary, memory, mask)"
                    )))
                }
            }
        }
        Ok(o)
    }

    /// The override in `HIPACC_CONFIG`, if set and non-empty.
    pub fn from_env() -> Result<Option<ConfigOverride>> {
        match std::env::var(ENV_VAR) {
            Ok(s) if !s.trim().is_empty() => ConfigOverride::parse(&s).map(Some),
            _ => Ok(None),
        }
    }

    /// `base` with the fixed axes replaced. A per-accessor memory list whose
    /// length does not match the kernel's accessors is an error.
    pub fn apply(&self, base: &Config) -> Result<Config> {
        let mut c = base.clone();
        if let Some(b) = self.boundary {
            c.boundary = b;
        }
        if let Some(p) = self.pixels_per_thread {
            c.pixels_per_thread = p;
        }
        if let Some(b) = self.block {
            c.block = b;
        }
        if let Some(m) = self.masks {
            c.masks = m;
        }
        if let Some(mem) = &self.memory {
            c.memory = match mem.as_slice() {
                [one] => vec![*one; base.memory.len()],
                many if many.len() == base.memory.len() => many.to_vec(),
                many => {
                    return Err(Error::Override {
                        text: self.to_string(),
                        reason: format!(
                            "{} memory kinds given for {} accessors",
                            many.len(),
                            base.memory.len()
                        ),
                    })
                }
            };
        }
        Ok(c)
    }
}

impl std::fmt::Display for ConfigOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(b) = self.boundary {
            parts.push(format!("boundary={}", b.name()));
        }
        if let Some(m) = &self.memory {
            let names: Vec<&str> = m.iter().map(|k| k.name()).collect();
            parts.push(format!("memory={}", names.join("/")));
        }
        if let Some(p) = self.pixels_per_thread {
            parts.push(format!("ppt={}", p.get()));
        }
        if let Some(b) = self.block {
            parts.push(format!("block={}x{}", b.x, b.y));
        }
        if let Some(m) = self.masks {
            parts.push(format!("mask={}", m.name()));
        }
        f.write_str(&parts.join(","))
    }
}

fn parse_block(value: &str) -> std::result::Result<BlockShape, String> {
    let (x, y) = value
        .split_once('x')
        .ok_or_else(|| format!("block `{value}` is not `WxH`"))?;
    let n = |s: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| format!("block `{value}`: `{s}` is not a number"))
    };
    Ok(BlockShape { x: n(x)?, y: n(y)? })
}

fn parse_memory(value: &str) -> std::result::Result<MemoryKind, String> {
    MemoryKind::ALL
        .into_iter()
        .find(|k| k.name() == value)
        .ok_or_else(|| format!("memory `{value}` is not one of global, readonly, texture, local"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key() {
        let o = ConfigOverride::parse(
            "block=32x4, ppt=8,boundary=generic,memory=global/texture,mask=constant",
        )
        .unwrap();
        assert_eq!(o.block, Some(BlockShape { x: 32, y: 4 }));
        assert_eq!(o.pixels_per_thread, Some(PixelsPerThread::Eight));
        assert_eq!(o.boundary, Some(BoundaryScheme::Generic));
        assert_eq!(
            o.memory,
            Some(vec![MemoryKind::Global, MemoryKind::Texture])
        );
        assert_eq!(o.masks, Some(MaskHandling::ConstantMemory));
        assert_eq!(ConfigOverride::parse(&o.to_string()).unwrap(), o);
        assert_eq!(
            ConfigOverride::parse("").unwrap(),
            ConfigOverride::default()
        );
    }

    #[test]
    fn rejects_bad_text_with_reason() {
        for (text, needle) in [
            ("block=32", "WxH"),
            ("block=ax4", "not a number"),
            ("ppt=2", "1, 4 or 8"),
            ("boundary=fast", "regions"),
            ("memory=shared", "global, readonly"),
            ("colour=red", "unknown key"),
            ("block", "key=value"),
        ] {
            let e = ConfigOverride::parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn applies_over_a_base() {
        let base = Config::uniform(2, BlockShape { x: 128, y: 1 });
        let o = ConfigOverride::parse("memory=local,ppt=4").unwrap();
        let c = o.apply(&base).unwrap();
        assert_eq!(c.memory, vec![MemoryKind::LocalTile; 2]);
        assert_eq!(c.pixels_per_thread, PixelsPerThread::Four);
        assert_eq!(c.block, base.block);
        let bad = ConfigOverride::parse("memory=local/global/global").unwrap();
        assert!(bad.apply(&base).is_err());
    }
}
