#include "gui/models/png_file.h"

#include <QBuffer>
#include <QByteArray>
#include <string_view>

#include "core/durable_file.h"

namespace trainsim::gui {

Status SavePng(const QImage& image, const QString& path) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (image.isNull() || !image.save(&buffer, "PNG")) {
    return Status::InvalidInput(path.toStdString() + ": cannot encode the image as PNG");
  }
  return WriteFileDurably(path.toStdString(),
                          std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
}

}  // namespace trainsim::gui
