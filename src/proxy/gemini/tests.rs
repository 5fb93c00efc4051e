//! Tests of the Gemini API.
