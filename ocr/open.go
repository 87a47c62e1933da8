package ocr

import (
	"errors"
	"fmt"
)

// Open starts the engine a setting names: "auto" (or "") the tesseract on
// PATH, "off" none, else the path of tesseract. With auto, a machine
// without tesseract (or its languages) reads no images: Open returns no
// engine and why, and the server goes on. A path given that does not work
// is an error.
func Open(setting, languages string) (engine *Engine, unavailable string, err error) {
	switch setting {
	case "off":
		return nil, "OCR is turned off (--ocr off)", nil
	case "", "auto":
		engine, err = New(Options{Languages: languages})
		var missing *Error
		if errors.As(err, &missing) {
			return nil, missing.Reason, nil
		}
	default:
		engine, err = New(Options{Path: setting, Languages: languages})
	}
	if err != nil {
		return nil, "", fmt.Errorf("--ocr: %w", err)
	}
	return engine, "", nil
}
