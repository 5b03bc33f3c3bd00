// Screenshots written like every other output: PNG bytes through the durable
// writer (core/durable_file.h), so a crash leaves the old file or the new one.
#pragma once

#include <QImage>
#include <QString>

#include "core/status.h"

namespace trainsim::gui {

// Encodes `image` as PNG and writes it to `path` atomically and durably.
Status SavePng(const QImage& image, const QString& path);

}  // namespace trainsim::gui
