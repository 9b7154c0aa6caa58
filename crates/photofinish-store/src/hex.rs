//! Lowercase hex: the one encoder and decoder for the digests, keys and tokens the server
//! writes as text (key hashes, the erasure key and its HMACs, webhook signatures, claim
//! tokens, the Redis log's fingerprints).

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lowercase hex, two digits a byte.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// The `N` bytes `text` spells in exactly `2 * N` hex digits (either case), else `None`.
pub fn decode<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.as_bytes();
    if text.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let mut out = [0u8; N];
    for (o, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        *o = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_bad_text_is_none() {
        let bytes: Vec<u8> = (0..=255).collect();
        let text = encode(&bytes);
        assert_eq!(&text[..8], "00010203");
        assert_eq!(&text[text.len() - 4..], "feff");
        let back: [u8; 256] = decode(&text).expect("round trip");
        assert_eq!(back.to_vec(), bytes);
        assert_eq!(decode::<2>("ABcd"), Some([0xab, 0xcd]));
        assert_eq!(decode::<2>("abc"), None, "odd length");
        assert_eq!(decode::<2>("abcdef"), None, "too long");
        assert_eq!(decode::<1>("g0"), None, "not a digit");
        assert_eq!(decode::<1>("+f"), None, "a sign is not a digit");
        assert_eq!(decode::<1>("é"), None, "not ASCII");
    }
}
