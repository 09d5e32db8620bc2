//! The Huffman decoder of PIZ blocks.
//!
//! A compressed stream is a 20-byte header (little-endian `u32`s: the
//! smallest and largest symbol with a code, `im` and `iM`; the table's
//! length; the number of bits of code data; one reserved word), the code
//! lengths of symbols `im..=iM` packed in 6 bits each (lengths 59 to 62
//! stand for runs of 2 to 5 unused symbols, 63 and 8 more bits for runs of
//! 6 to 261), then the codes, most significant bit first. Codes are
//! canonical: shorter codes have larger values, and among codes of one
//! length the smaller symbol has the smaller value. The largest symbol
//! `iM` is a run marker: it and the next 8 bits repeat the previous value
//! that many times.
//!
//! Decoding looks up the next 14 bits in a table; longer codes (up to 58
//! bits) share an entry with the list of their symbols, tried in turn.

/// Symbols: every 16-bit value, and one more for the run marker.
const SYMBOLS: usize = (1 << 16) + 1;
/// Bits of the lookup table's index.
const TABLE_BITS: u32 = 14;
/// The length codes that stand for runs of unused symbols.
const SHORT_RUN: u64 = 59;
const LONG_RUN: u64 = 63;

/// Reads bits, most significant first.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    /// The bits read and not yet used are the low `held` bits of `value`.
    value: u128,
    held: u32,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Bits<'a> {
        Bits {
            data,
            pos: 0,
            value: 0,
            held: 0,
        }
    }

    /// Reads one more byte into `value`.
    fn byte(&mut self) -> Result<(), &'static str> {
        let b = *self.data.get(self.pos).ok_or("Huffman data ends early")?;
        self.pos += 1;
        self.value = (self.value << 8) | u128::from(b);
        self.held += 8;
        Ok(())
    }

    /// The next `n` bits (at most 64).
    fn take(&mut self, n: u32) -> Result<u64, &'static str> {
        while self.held < n {
            self.byte()?;
        }
        self.held -= n;
        Ok(((self.value >> self.held) & ((1u128 << n) - 1)) as u64)
    }

    /// The held bits from the `n`th newest on, without using them.
    fn peek(&self, n: u32) -> u64 {
        ((self.value >> (self.held - n)) & ((1u128 << n) - 1)) as u64
    }
}

/// A lookup-table entry.
#[derive(Clone)]
enum Entry {
    Empty,
    /// A code of at most [`TABLE_BITS`] bits.
    Short {
        length: u32,
        symbol: u32,
    },
    /// The symbols of the longer codes that start with these bits.
    Long(Vec<u32>),
}

/// Decodes `count` 16-bit values from a PIZ block's Huffman stream.
pub fn decode(data: &[u8], count: usize) -> Result<Vec<u16>, &'static str> {
    let word = |i: usize| -> Result<usize, &'static str> {
        let b = data
            .get(4 * i..4 * i + 4)
            .ok_or("Huffman header ends early")?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let (first, last, bits) = (word(0)?, word(1)?, word(3)?);
    if first > last || last >= SYMBOLS {
        return Err("Huffman symbol range");
    }
    let table = data.get(20..).ok_or("Huffman header ends early")?;
    let (lengths, used) = read_lengths(table, first, last)?;
    let codes = canonical_codes(&lengths);
    let stream = &table[used..];
    if bits > 8 * stream.len() {
        return Err("Huffman data ends early");
    }
    let lookup = lookup_table(&lengths, &codes, first, last)?;
    let stream = &stream[..bits.div_ceil(8)];
    Decoder {
        lengths: &lengths,
        codes: &codes,
        lookup: &lookup,
        run: last as u32,
        out: Vec::with_capacity(count),
        count,
    }
    .run(stream, bits)
}

/// The code length of every symbol, and the bytes the packed lengths took.
fn read_lengths(table: &[u8], first: usize, last: usize) -> Result<(Vec<u8>, usize), &'static str> {
    let mut lengths = vec![0u8; SYMBOLS];
    let mut bits = Bits::new(table);
    let mut symbol = first;
    while symbol <= last {
        let length = bits.take(6)?;
        let unused = match length {
            LONG_RUN => bits.take(8)? as usize + 6,
            SHORT_RUN.. => (length - SHORT_RUN) as usize + 2,
            _ => {
                lengths[symbol] = length as u8;
                symbol += 1;
                continue;
            }
        };
        if symbol + unused > last + 1 {
            return Err("Huffman table runs past its last symbol");
        }
        symbol += unused;
    }
    Ok((lengths, bits.pos))
}

/// The canonical code of every symbol from its length.
fn canonical_codes(lengths: &[u8]) -> Vec<u64> {
    let mut count = [0u64; 59];
    for &l in lengths {
        count[usize::from(l)] += 1;
    }
    // The first code of each length, longest first.
    let mut next = 0u64;
    for l in (1..59).rev() {
        let following = (next + count[l]) >> 1;
        count[l] = next;
        next = following;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                return 0;
            }
            let code = count[usize::from(l)];
            count[usize::from(l)] += 1;
            code
        })
        .collect()
}

fn lookup_table(
    lengths: &[u8],
    codes: &[u64],
    first: usize,
    last: usize,
) -> Result<Vec<Entry>, &'static str> {
    let mut table = vec![Entry::Empty; 1 << TABLE_BITS];
    for symbol in first..=last {
        let (length, code) = (u32::from(lengths[symbol]), codes[symbol]);
        if length == 0 {
            continue;
        }
        if code >> length != 0 {
            return Err("Huffman code longer than its length");
        }
        if length > TABLE_BITS {
            match &mut table[(code >> (length - TABLE_BITS)) as usize] {
                Entry::Short { .. } => return Err("Huffman codes overlap"),
                Entry::Long(list) => list.push(symbol as u32),
                e @ Entry::Empty => *e = Entry::Long(vec![symbol as u32]),
            }
        } else {
            let start = (code << (TABLE_BITS - length)) as usize;
            for e in &mut table[start..start + (1 << (TABLE_BITS - length))] {
                if !matches!(e, Entry::Empty) {
                    return Err("Huffman codes overlap");
                }
                *e = Entry::Short {
                    length,
                    symbol: symbol as u32,
                };
            }
        }
    }
    Ok(table)
}

struct Decoder<'a> {
    lengths: &'a [u8],
    codes: &'a [u64],
    lookup: &'a [Entry],
    /// The run marker symbol.
    run: u32,
    out: Vec<u16>,
    count: usize,
}

impl Decoder<'_> {
    fn run(mut self, stream: &[u8], bits: usize) -> Result<Vec<u16>, &'static str> {
        let mut input = Bits::new(stream);
        while input.pos < stream.len() {
            input.byte()?;
            while input.held >= TABLE_BITS {
                match &self.lookup[input.peek(TABLE_BITS) as usize] {
                    Entry::Short { length, symbol } => {
                        input.held -= length;
                        self.emit(*symbol, &mut input)?;
                    }
                    Entry::Long(symbols) => {
                        let symbol = self.long_code(symbols, &mut input)?;
                        self.emit(symbol, &mut input)?;
                    }
                    Entry::Empty => return Err("invalid Huffman code"),
                }
            }
        }
        // The last byte's unused bits, then the codes still held.
        let padding = ((8 - bits % 8) % 8) as u32;
        input.held = input.held.checked_sub(padding).ok_or("Huffman padding")?;
        input.value >>= padding;
        while input.held > 0 {
            let index =
                (input.value << (TABLE_BITS - input.held)) as usize & ((1 << TABLE_BITS) - 1);
            match self.lookup[index] {
                Entry::Short { length, symbol } if length <= input.held => {
                    input.held -= length;
                    self.emit(symbol, &mut input)?;
                }
                _ => return Err("invalid Huffman code"),
            }
        }
        if self.out.len() != self.count {
            return Err("Huffman data decodes to the wrong size");
        }
        Ok(self.out)
    }

    /// Finds which of `symbols` (codes longer than the table's index)
    /// comes next, and uses its bits.
    fn long_code(&self, symbols: &[u32], input: &mut Bits<'_>) -> Result<u32, &'static str> {
        for &symbol in symbols {
            let length = u32::from(self.lengths[symbol as usize]);
            while input.held < length && input.pos < input.data.len() {
                input.byte()?;
            }
            if input.held >= length && input.peek(length) == self.codes[symbol as usize] {
                input.held -= length;
                return Ok(symbol);
            }
        }
        Err("invalid Huffman code")
    }

    /// Appends a value, or repeats the previous one for the run marker.
    fn emit(&mut self, symbol: u32, input: &mut Bits<'_>) -> Result<(), &'static str> {
        if symbol == self.run {
            let repeat = input.take(8)? as usize;
            let previous = *self.out.last().ok_or("Huffman run before any value")?;
            if self.out.len() + repeat > self.count {
                return Err("Huffman data decodes to the wrong size");
            }
            self.out.resize(self.out.len() + repeat, previous);
        } else {
            if self.out.len() == self.count {
                return Err("Huffman data decodes to the wrong size");
            }
            self.out.push(symbol as u16);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_codes_are_prefix_free_and_ordered() {
        let mut lengths = vec![0u8; 8];
        lengths[..5].copy_from_slice(&[2, 2, 2, 3, 3]);
        let codes = canonical_codes(&lengths);
        // Longer codes take the smaller values: 3-bit 000, 001; 2-bit 01,
        // 10, 11.
        assert_eq!(&codes[..5], &[1, 2, 3, 0, 1]);
    }

    #[test]
    fn corrupt_streams_are_errors_not_panics() {
        assert!(decode(&[], 4).is_err());
        assert!(decode(&[0; 19], 4).is_err());
        // Symbols 5..=3: an empty range.
        let mut header = [0u8; 24];
        header[0] = 5;
        header[4] = 3;
        assert!(decode(&header, 4).is_err());
        // One symbol (0) of length 1, but no code data for 4 values.
        let mut one = vec![0u8; 20];
        one.push(1 << 2);
        assert!(decode(&one, 4).is_err());
        // Every truncation of a stream of noise fails cleanly.
        let noise: Vec<u8> = (0..200u32).map(|i| (i * 97 % 251) as u8).collect();
        for n in 0..noise.len() {
            let _ = decode(&noise[..n], 16);
        }
    }
}
